#!/usr/bin/env python3
"""check_honesty.py -- memtop never calls data exact when an allocator is unseen.

Why it exists (issue 11): a program whose malloc is its own (here a bump
allocator defined in the executable) allocates where memtop's hooks never
run, and memtop used to say "Data
exact" with a heap of 0 B, so a CI leak check passed falsely.  Checks that
the JSON export's health says exact: false with the reason, that the batch
report's data line and the target's log say NOT exact (the log once), that
--strict makes `memtop --export F -- PROG` and `memtop -p PID --export F`
exit 3 while the program's output and exit status are unchanged without
it, that a recording of it replays NOT exact (--strict exits 3), that a
library with its own allocator loaded with dlopen after start is found too,
that a program on a shared libmimalloc (its whole API hooked) is exact,
and that a glibc program stays exact (--strict exits 0).
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402



def export(ctx, name, prog, strict=False):
    out = ctx.path(name + ".json")
    cmd = [ctx.args.memtop, "--export", out] + (["--strict"] if strict else []) + ["--"] + prog
    proc = e2elib.run(cmd, ctx.env)
    check(os.path.exists(out), "%s wrote no snapshot\n%s" % (e2elib.show_cmd(cmd),
                                                            e2elib.describe(proc)))
    return proc, e2elib.load_json(out), cmd


def expect_inexact(ctx, name, prog, stdout, reason):
    proc, snap, cmd = export(ctx, name, prog)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0, "without --strict the program's status must pass: " + where)
    check(proc.stdout == stdout, "the program's output changed: %r\n%s" % (proc.stdout, where))
    health = snap["health"]
    check(health.get("exact") is False, "health.exact is %r, expected false\n%s" %
          (health.get("exact"), where))
    check(re.search(reason, health.get("not_exact") or ""),
          "health.not_exact %r does not say %r" % (health.get("not_exact"), reason))
    unseen = [a for a in health["allocators"] if not a["exact"]]
    check(unseen, "allocators %r: expected one not exact" % health["allocators"])
    warnings = [ln for ln in proc.stderr.splitlines()
                if re.match(r"memtop\[\d+\]: NOT exact: ", ln)]
    check(len(warnings) == 1 and re.search(reason, warnings[0]),
          "expected one NOT exact warning in the target's log saying %r, got %r" %
          (reason, warnings))
    first = snap
    proc, snap, cmd = export(ctx, name + "-strict", prog, strict=True)
    check(proc.returncode == 3, "--strict on inexact data exited %s, expected 3\n%s" %
          (proc.returncode, e2elib.describe(proc)))
    check("--strict: the data is NOT exact" in proc.stderr,
          "--strict did not say why it failed\n" + e2elib.describe(proc))
    batch = e2elib.run([ctx.args.memtop, "--batch", "-n", "1", "--"] + prog, ctx.env)
    check(re.search(r"^data: NOT exact: .*" + reason, batch.stdout, re.M),
          "--batch has no 'data: NOT exact' line saying %r\n%s" % (reason,
                                                                   e2elib.describe(batch)))
    return first


def expect_exact(ctx, name, prog):
    proc, snap, cmd = export(ctx, name, prog, strict=True)
    check(proc.returncode == 0, "--strict on a glibc program exited %s\n%s" %
          (proc.returncode, e2elib.describe(proc)))
    check(snap["health"].get("exact") is True and snap["health"].get("not_exact") is None,
          "a glibc program's health is not exact: %r" % snap["health"])
    check("NOT exact" not in proc.stderr, "the target warned: " + e2elib.describe(proc))
    return snap


def expect_nopie_exact(ctx, nopie):
    """A canonical PLT entry for malloc in a non-PIE executable is not an
    allocator of its own: exact, and the leak through it counted."""
    snap = expect_exact(ctx, "nopie", [nopie])
    leaks = [t for t in snap["traces"] if t["live_bytes"] == 1000 and
             any(f.get("function") == "leak_nopie" for f in t["frames"])]
    check(len(leaks) == 1, "the 1000 bytes leaked by leak_nopie are not one trace: %r" %
          [(t["live_bytes"], [f.get("function") for f in t["frames"]][:3])
           for t in snap["traces"]])


def attach_strict(ctx, bump):
    """-p PID --export --strict fails on the running bump program too."""
    proc = e2elib.start_preloaded(ctx, [bump, "30"])
    try:
        e2elib.wait_segment(ctx, proc)
        out = ctx.path("pid.json")
        cmd = [ctx.args.memtop, "-p", str(proc.pid), "--export", out, "--strict"]
        res = e2elib.run(cmd, ctx.env)
        check(res.returncode == 3, "%s exited %s, expected 3\n%s" %
              (e2elib.show_cmd(cmd), res.returncode, e2elib.describe(res)))
        check(e2elib.load_json(out)["health"]["exact"] is False, "-p export says exact")
    finally:
        e2elib.stop(proc)


def replay_strict(ctx, bump):
    """A recording of the bump program replays NOT exact: it carries the
    allocators memtop could not see, and why (ALLOCATORS records)."""
    dat = ctx.path("bump.dat")
    rec = e2elib.run([ctx.args.memtop, "--record", dat, "--export", ctx.path("rec.json"), "--",
                      bump], ctx.env)
    check(rec.returncode == 0 and os.path.exists(dat), "recording failed\n" +
          e2elib.describe(rec))
    out = ctx.path("replay.json")
    cmd = [ctx.args.memtop, "-f", dat, "--export", out, "--strict"]
    res = e2elib.run(cmd, ctx.env)
    check(res.returncode == 3, "%s exited %s, expected 3\n%s" %
          (e2elib.show_cmd(cmd), res.returncode, e2elib.describe(res)))
    health = e2elib.load_json(out)["health"]
    check(health["exact"] is False and
          "alloc_bump defines its own malloc (not hooked)" in health["not_exact"],
          "the replay's health does not say NOT exact, naming why: %r" % health)


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    check(mine.bump and mine.nopie, "--bump and --nopie are required")
    ctx = e2elib.Ctx(args)
    expect_exact(ctx, "plain", ["sh", "-c", "exit 0"])
    expect_nopie_exact(ctx, mine.nopie)
    expect_inexact(ctx, "bump", [mine.bump], "bump: x\n",
                   r"alloc_bump defines its own malloc \(not hooked\)")
    attach_strict(ctx, mine.bump)
    replay_strict(ctx, mine.bump)
    # found and hooked (docs/allocators.md): a shared mimalloc, its whole API
    for opt, pkg in (("mimalloc", "libmimalloc-dev"),):
        if not getattr(mine, opt):
            e2elib.fail("%s was not found at configure time: install %s "
                        "(scripts/install-deps.sh)" % (opt, pkg))
    snap = expect_exact(ctx, "mimalloc", [mine.mimalloc])
    # its mi_* calls through the PLT are hooked: exact bytes per calling function
    live = {}
    for tr in snap["traces"]:
        if tr["live_bytes"]:
            fn = tr["frames"][0].get("function") if tr["frames"] else ""
            live[fn] = live.get(fn, 0) + tr["live_bytes"]
    check(live.get("leak_mi") == 3000 and "main" not in live,
          "mimalloc: live bytes per function %r, expected leak_mi 3000 and nothing in main's "
          "mi_malloc_aligned/mi_free_size loop" % live)
    # found after start: a library with its own (hidden) malloc, loaded by dlopen
    expect_inexact(ctx, "dlopen", [mine.dlopen, mine.own_lib], "loaded\n",
                   r"liballoc_own_lib\.so defines its own malloc \(not hooked\)")


if __name__ == "__main__":
    alloclib.run(test)
