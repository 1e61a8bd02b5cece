#!/usr/bin/env python3
"""check_list.py -- `memtop --list` shows a running preloaded process.

Why it exists: --list is how a user finds what to attach to.  Starts
memtop-demo in the background with LD_PRELOAD=libmemtop.so and a private
MEMTOP_SHM_DIR, waits for its segment, and expects --list (same
MEMTOP_SHM_DIR) to print a line with the demo's pid and command.  With no
tracked process, --list must still succeed.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def test(args):
    ctx = e2elib.Ctx(args)
    empty = e2elib.run([args.memtop, "--list"], ctx.env, timeout=30)
    check(empty.returncode == 0, "memtop --list with no process failed:\n" +
          e2elib.describe(empty))
    demo = e2elib.start_preloaded(ctx, [args.demo, "60"])
    try:
        e2elib.wait_segment(ctx, demo)
        proc = e2elib.run([args.memtop, "--list"], ctx.env, timeout=30)
        check(proc.returncode == 0, "memtop --list failed:\n" + e2elib.describe(proc))
        pid = re.compile(r"(^|\s)%d(\s|$)" % demo.pid)
        rows = [ln for ln in proc.stdout.splitlines() if pid.search(ln)]
        check(len(rows) == 1, "expected one --list line with pid %d:\n%s" %
              (demo.pid, e2elib.describe(proc)))
        check("memtop-demo" in rows[0], "the --list line of pid %d does not name memtop-demo: %r"
              % (demo.pid, rows[0]))
        check(demo.poll() is None, "memtop --list disturbed the demo (it exited %s)" %
              demo.returncode)
        print("ok: %s" % rows[0].strip())
    finally:
        e2elib.stop(demo)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
