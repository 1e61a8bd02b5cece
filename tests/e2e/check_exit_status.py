#!/usr/bin/env python3
"""check_exit_status.py -- `memtop --export F -- PROG` exits with PROG's exit status.

Why it exists: the issue promises that `memtop --export` works as a leak check
in CI, which needs the program's exit status passed through.  Runs
`memtop --export x.json -- sh -c 'exit 3'` (expects 3) and the same with
exit 0 (expects 0), a few times each, and checks that each run wrote an
exit-time snapshot and left no segment behind.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

ROUNDS = 5


def export_exit(ctx, args, code):
    out = ctx.path("exit%d.json" % code)
    cmd = [args.memtop, "--export", out, "--", "sh", "-c", "exit %d" % code]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == code, "%s exited %s, expected %d\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, code, e2elib.describe(proc)))
    check(os.path.exists(out), "%s exited %d but wrote no snapshot\n%s" %
          (e2elib.show_cmd(cmd), code, e2elib.describe(proc)))
    snap = e2elib.load_json(out)
    shape = e2elib.snapshot_shape_errors(snap)
    check(not shape, "%s: bad snapshot shape:\n  %s" % (out, "\n  ".join(shape)))
    check(snap["exited"] is True, "%s: exited is %r, expected true" % (out, snap["exited"]))
    check(not ctx.segments(), "segments left behind: %s" % ctx.segments())


def test(args):
    ctx = e2elib.Ctx(args)
    # Several rounds: a program this short exits within microseconds, which
    # is exactly when a race between start-up and exit would show.
    for _ in range(ROUNDS):
        export_exit(ctx, args, 3)
        export_exit(ctx, args, 0)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
