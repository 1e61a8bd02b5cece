#!/usr/bin/env python3
"""check_namespaces.py -- a target in its own mount and PID namespaces.

Why it exists: in a container the target's segment is memtop-1 in a /dev/shm
the host does not see.  Judged by the header's pid, the host took it for
stale (its pid 1 is another process) and `memtop --clean` removed the
segment of a running process.  Starts memtop-demo with libmemtop.so under
`unshare -m -p -f` over a private tmpfs (runs as root; skipped otherwise)
and expects, from the host: --list (through /proc/PID/root, and in the
host's own, empty directory: found in the maps) shows it running once,
under its host pid, with its PID namespace, --clean keeps it (and the file stays), `memtop -p HOSTPID` finds
it through the target's maps and shows the host pid, and the target is
unharmed; then the same for a private /dev/shm without a PID namespace.
Then two targets, each pid 1 of its own PID namespace, sharing the host's
segment directory (the containers of one pod share /dev/shm): the second
must publish beside the first's memtop-1, not over it (it did, and the first
could no longer be attached: "no segment yet"), both attach, the second's
exit leaves the first's name, and a third pid 1 after the first was killed
takes memtop-1 over again (a leftover of a dead process is still replaced);
with that file removed, `memtop -p` says so in one line.  `memtop --clean`
run as from a third container (its own PID namespace and /proc: the
targets' pid 1 is not theirs there, and it sees no maps of theirs) keeps
both segments: their targets hold their locks.
Last, memtop-exact in mount and PID namespaces, held alive after its work:
`memtop -p HOSTPID --export` must match its ground truth to the byte (as
check_exact.py does for a launched one), and `--batch` must show the same
totals.
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_exact  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

HOLD_MS = 120000  # memtop-exact waits this long after its work: until stopped


def ns_dir(ctx, pid):
    return "/proc/%d/root%s" % (pid, ctx.shm_dir)


def attach(args, ctx, pid):
    """`memtop -p HOSTPID` from the host: found through the target's maps,
    shown under the host pid, running."""
    batch = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env, timeout=60)
    check(batch.returncode == 0, "memtop -p %d failed:\n%s" % (pid, e2elib.describe(batch)))
    first = batch.stdout.splitlines()[0] if batch.stdout else ""
    check(" pid %d running" % pid in first and "memtop-demo" in batch.stdout,
          "memtop -p %d does not show host pid %d running:\n%s" %
          (pid, pid, e2elib.describe(batch)))


def batch_totals(text):
    """(live blocks, allocs, frees) of --batch's exact integers ("heap: ...
    live in N blocks", "total N allocs (...), M frees"); its bytes are
    rounded (KiB)."""
    live = re.search(r"^heap: .* live in ([0-9]+) blocks", text, re.M)
    total = re.search(r"^rate: .*total ([0-9]+) allocs \(.*?\), ([0-9]+) frees", text, re.M)
    if not live or not total:
        return None
    return int(live.group(1)), int(total.group(1)), int(total.group(2))


def exact_counts(args, ctx):
    """memtop-exact in mount and PID namespaces, attached by host pid: its
    counts are exact to the byte, in the export and in --batch."""
    ground = ctx.path("ns-ground.json")
    env = ctx.env_with(MEMTOP_TEMP_MS=0, MEMTOP_EXACT_HOLD_MS=HOLD_MS)
    proc, pid = e2elib.start_in_namespaces(ctx, [args.exact, ground], env=env)
    try:
        truth = e2elib.wait_for(lambda: os.path.exists(ground) and load_quiet(ground),
                                "memtop-exact's ground truth")
        out = ctx.path("ns-exact.json")
        exp = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env, timeout=60)
        check(exp.returncode == 0, "memtop -p %d --export failed:\n%s" % (pid, e2elib.describe(exp)))
        snap = e2elib.load_json(out)
        check(snap["pid"] == pid and snap["state"] == "running",
              "the export names pid %r (%r), not running host pid %d" %
              (snap["pid"], snap["state"], pid))
        errs, matched = check_exact.compare(args, snap, truth, "", final=False)
        check(not errs, "memtop -p %d --export (%s) disagrees with the ground truth %s:\n%s" %
              (pid, out, ground, "\n".join(errs)))
        batch = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env, timeout=60)
        got = batch_totals(batch.stdout)
        t = snap["totals"]
        want = (t["live_count"], t["alloc_count"], t["free_count"])
        check(batch.returncode == 0 and got == want,
              "--batch shows %r (live blocks, allocs, frees), the export %r:\n%s" %
              (got, want, e2elib.describe(batch)))
        print("ok: pid %d in its namespaces: %d sites, %d traces exact to the byte" %
              (pid, len(truth["sites"]), matched))
    finally:
        e2elib.stop(proc)


def maps_segment(pid):
    """The segment name in pid's maps ("memtop-1", "memtop-1-<hex>"), or
    None (none, or one whose file was replaced: "... (deleted)")."""
    with open("/proc/%d/maps" % pid) as f:
        m = e2elib.SEGMENT_MAP.search(f.read())
    return m.group(0).lstrip("/") if m else None


def clean_from_another_pid_ns(args, ctx, pids):
    """`memtop --clean` as a container beside the targets sees them: in a
    PID namespace of its own with its own /proc (it is pid 1 there, the
    targets' pid 1 is not, and no maps show their segments): judged stale,
    the segments are kept because their targets hold their locks; --list
    there shows them running, not stale."""
    before = ctx.segments()
    cleaned = e2elib.run(["unshare", "-p", "-f", "--mount-proc", args.memtop, "--clean"],
                         ctx.env, timeout=60)
    check(cleaned.returncode == 0, "--clean in its own PID namespace failed:\n" +
          e2elib.describe(cleaned))
    check(ctx.segments() == before and "a running process holds its lock" in cleaned.stdout,
          "--clean from another PID namespace removed running targets' segments (%s, now %s):"
          "\n%s" % (before, ctx.segments(), e2elib.describe(cleaned)))
    for pid in pids:
        check(maps_segment(pid) in before, "pid %d lost its segment to --clean: it maps %r" %
              (pid, maps_segment(pid)))
    # --list there: running (their locks are held), not stale, and says why
    # their pids are not its own.  Both pid 1s' files name pid 1, and --list
    # lists by pid: one row (the second file is listed only where its
    # process is seen)
    listed = e2elib.run(["unshare", "-p", "-f", "--mount-proc", args.memtop, "--list"],
                        ctx.env, timeout=60)
    rows = [ln for ln in listed.stdout.splitlines() if "namespace not seen here" in ln]
    check(listed.returncode == 0 and len(rows) == 1 and
          all(ln.split()[1] == "running" for ln in rows) and " stale " not in listed.stdout,
          "--list from another PID namespace does not show pid 1 running:\n%s" %
          e2elib.describe(listed))


def pod(args, ctx):
    """Two pid 1 targets sharing one segment directory, then a third."""
    a_proc, a = e2elib.start_in_namespaces(ctx, [args.demo, "120"], shared=True)
    b_proc = c_proc = None
    try:
        check(maps_segment(a) == "memtop-1", "the first pid 1 maps %r" % maps_segment(a))
        b_proc, b = e2elib.start_in_namespaces(ctx, [args.demo, "8"], shared=True)
        sb = maps_segment(b)
        check(sb is not None and sb.startswith("memtop-1-"),
              "the second pid 1 (host pid %d) published as %r, not beside memtop-1" % (b, sb))
        check(maps_segment(a) == "memtop-1",
              "the second pid 1 took the first's segment: pid %d maps %r (%s)" %
              (a, maps_segment(a), ctx.segments()))
        attach(args, ctx, a)
        attach(args, ctx, b)
        clean_from_another_pid_ns(args, ctx, [a, b])
        listed = e2elib.run([args.memtop, "--list"], ctx.env, timeout=60)
        shown = {ln.split()[0] for ln in listed.stdout.splitlines() if " running " in ln}
        check(listed.returncode == 0 and {str(a), str(b)} <= shown,
              "--list does not show pids %d and %d running:\n%s" %
              (a, b, e2elib.describe(listed)))
        b_proc.wait(timeout=60)  # the demo's 8 s, then its normal exit
        check("memtop-1" in ctx.segments(), "the second's exit removed the first's memtop-1: %s" %
              ctx.segments())
        attach(args, ctx, a)
        e2elib.stop(a_proc)  # killed: its memtop-1 stays, a leftover
        c_proc, c = e2elib.start_in_namespaces(ctx, [args.demo, "120"], shared=True)
        check(maps_segment(c) == "memtop-1",
              "a new pid 1 did not replace the dead one's leftover memtop-1: it maps %r (%s)" %
              (maps_segment(c), ctx.segments()))
        attach(args, ctx, c)
        os.unlink(os.path.join(ctx.shm_dir, "memtop-1"))
        gone = e2elib.run([args.memtop, "-p", str(c), "--batch", "-n", "1"], ctx.env, timeout=60)
        check(gone.returncode == 1 and "was removed or replaced" in gone.stderr and
              len(gone.stderr.strip().splitlines()) == 1,
              "-p of a target whose segment file was removed does not say so in one line:\n%s" %
              e2elib.describe(gone))
        print("ok: two pid 1 targets sharing %s: memtop-1 and %s, both attached; a third "
              "replaced the dead one's leftover" % (ctx.shm_dir, sb))
    finally:
        for p in (a_proc, b_proc, c_proc):
            if p:
                e2elib.stop(p)


def load_quiet(path):
    """The JSON in path, or None while it is being written."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except ValueError:
        return None


def test(args):
    # Every part needs unshare, the pod's too: SKIP (77), not a pass.
    e2elib.skip_unless_root("needs root for unshare: a target in its own mount and PID "
                            "namespaces, two pid 1 targets sharing a directory (a pod), "
                            "--clean from another PID namespace")
    ctx = e2elib.Ctx(args)
    proc, pid = e2elib.start_in_namespaces(ctx, [args.demo, "120"])
    try:
        check(not ctx.segments(), "the host sees the private tmpfs: %s" % ctx.segments())
        seg = os.path.join(ns_dir(ctx, pid), "memtop-1")
        check(os.path.exists(seg), "no memtop-1 in the target's namespace (%s)" % seg)
        env = ctx.env_with(MEMTOP_SHM_DIR=ns_dir(ctx, pid))
        listed = e2elib.run([args.memtop, "--list"], env, timeout=60)
        check(listed.returncode == 0, "--list failed:\n" + e2elib.describe(listed))
        rows = [ln for ln in listed.stdout.splitlines() if "memtop-demo" in ln]
        check(len(rows) == 1 and " running " in rows[0],
              "--list through /proc/%d/root does not show the demo running:\n%s" %
              (pid, e2elib.describe(listed)))
        check(rows[0].split()[0] == str(pid) and "[pid 1 in pid:[" in rows[0],
              "--list does not name host pid %d and its namespace: %r" % (pid, rows[0]))
        host = e2elib.run([args.memtop, "--list"], ctx.env, timeout=60)
        hrows = [ln for ln in host.stdout.splitlines() if "memtop-demo" in ln]
        check(host.returncode == 0 and len(hrows) == 1 and hrows[0].split()[0] == str(pid) and
              " running " in hrows[0] and "[pid 1 in pid:[" in hrows[0],
              "--list from the host (an empty %s) does not show pid %d once:\n%s" %
              (ctx.shm_dir, pid, e2elib.describe(host)))
        cleaned = e2elib.run([args.memtop, "--clean"], env, timeout=60)
        check(cleaned.returncode == 0, "--clean failed:\n" + e2elib.describe(cleaned))
        check(os.path.exists(seg), "--clean removed the segment of running pid %d:\n%s" %
              (pid, e2elib.describe(cleaned)))
        check(proc.poll() is None, "the target died (%s)" % proc.returncode)
        attach(args, ctx, pid)
        print("ok: pid %d (1 in its namespace): %s; --clean kept it" % (pid, rows[0].strip()))
    finally:
        e2elib.stop(proc)
    proc, pid = e2elib.start_in_namespaces(ctx, [args.demo, "120"], pid_ns=False)
    try:
        check(not ctx.segments(), "the host sees the private tmpfs: %s" % ctx.segments())
        attach(args, ctx, pid)
        print("ok: private /dev/shm, pid %d attached from the host" % pid)
    finally:
        e2elib.stop(proc)
    pod(args, ctx)
    exact_counts(args, ctx)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
