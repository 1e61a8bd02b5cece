#!/usr/bin/env python3
"""check_create_fail.py -- a target that cannot create its segment says why, once, and memtop shows it.

Why it exists: when the target could not create its segment (a full or
missing /dev/shm, no descriptor left), it said so on its stderr and memtop
only said the process "runs libmemtop.so but has no segment yet" (after
waiting) or "is not running with libmemtop.so"; --list did not show it at
all.  The reason is now kept in libmemtop.so's status record, which memtop
reads through /proc/PID/mem (docs/shm-protocol.md, "When there is no
segment").  Two targets, each with MEMTOP_START_MS=0 (the segment is
created at once, so it has failed by the time memtop looks):
  - MEMTOP_SHM_DIR a directory that does not exist (any user): `memtop -p
    PID --batch` and --list say "cannot create its segment: No such file or
    directory (PATH)";
  - as root, memtop-demo under `unshare -m -p -f` with a 4 KiB tmpfs as its
    /dev/shm (too small for the 16 KiB header): `memtop -p HOSTPID --batch`,
    `--export` and --list from the host say "No space left on device"
    (skipped when not root or unshare is impossible).
Each target warns exactly once on its stderr; `memtop --batch -- PROG` with
the missing directory says why too, while PROG runs.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

CREATE = "the target cannot create its segment: "


def shown(args, env, pid, reason):
    """memtop -p PID --batch, once the target has failed (it may still be
    starting): exits non-zero and gives the reason; returns its stderr."""
    def failed():
        b = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], env, timeout=60)
        return b if "yet" not in b.stderr else None

    batch = e2elib.wait_for(failed, "memtop -p %d to give a reason" % pid)
    check(batch.returncode != 0 and CREATE in batch.stderr and reason in batch.stderr,
          "memtop -p %d does not say why there is no segment (%r):\n%s" %
          (pid, reason, e2elib.describe(batch)))
    return batch.stderr.strip()


def listed(args, env, pid, reason):
    out = e2elib.run([args.memtop, "--list"], env, timeout=60)
    rows = [ln for ln in out.stdout.splitlines() if ln.split()[:1] == [str(pid)]]
    check(out.returncode == 0 and len(rows) == 1 and CREATE in rows[0] and reason in rows[0],
          "--list does not show pid %d with the reason %r:\n%s" %
          (pid, reason, e2elib.describe(out)))
    return rows[0].strip()


def warned_once(proc, what):
    e2elib.stop(proc)
    err = proc.stderr.read()
    n = err.count("cannot set up ") + err.count("cannot create ")
    check(n == 1, "the target reported %s %d times:\n%s" % (what, n, err))


def missing_dir(args, ctx):
    missing = ctx.path("no-such-dir")
    env = ctx.env_with(MEMTOP_SHM_DIR=missing)
    proc = e2elib.start_preloaded(ctx, [args.demo, "120"], MEMTOP_SHM_DIR=missing,
                                  MEMTOP_START_MS=0)
    try:
        msg = shown(args, env, proc.pid, "No such file or directory")
        row = listed(args, env, proc.pid, "No such file or directory")
    finally:
        e2elib.stop(proc)
    warned_once(proc, "the missing directory")
    # memtop -- PROG says why while PROG runs (its memory is gone after)
    launched = e2elib.run([args.memtop, "--batch", "-n", "1", "--", args.demo, "3"],
                          ctx.env_with(MEMTOP_SHM_DIR=missing, MEMTOP_START_MS=0), timeout=60)
    check(CREATE in launched.stderr and "No such file or directory" in launched.stderr and
          "exited without a memtop segment" not in launched.stderr,
          "memtop -- PROG does not say why there is no segment:\n" + e2elib.describe(launched))
    print("ok: %s\n    --list: %s\n    -- PROG: %s" %
          (msg, row, launched.stderr.strip().splitlines()[-1]))


def full_tmpfs(args, ctx):
    env = ctx.env_with(MEMTOP_START_MS=0)
    proc, pid = e2elib.start_in_namespaces(ctx, [args.demo, "120"], size="4k", env=env,
                                           until=e2elib.PRELOAD_MAP)
    try:
        msg = shown(args, ctx.env, pid, "No space left on device")
        out = ctx.path("full.json")
        exp = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env, timeout=60)
        check(exp.returncode != 0 and "No space left on device" in exp.stderr and
              not os.path.exists(out), "--export:\n" + e2elib.describe(exp))
        row = listed(args, ctx.env, pid, "No space left on device")
    finally:
        e2elib.stop(proc)
    warned_once(proc, "the full tmpfs")
    print("ok: %s\n    --list: %s" % (msg, row))


def test(args):
    ctx = e2elib.Ctx(args)
    missing_dir(args, ctx)
    if os.geteuid() != 0:
        print("SKIP: the full tmpfs needs root for unshare", flush=True)
        sys.exit(e2elib.SKIP)
    full_tmpfs(args, ctx)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
