#!/usr/bin/env python3
"""check_segment.py -- a preloaded process's segment: name, owner, mode 0600, removed at exit.

Why it exists: segments hold a process's heap profile, so they must be private
to its user (mode 0600), live at $MEMTOP_SHM_DIR/memtop-<pid>, and be removed
when the process exits cleanly (it was not started by a memtop that keeps it).
Runs memtop-demo with LD_PRELOAD=libmemtop.so and a private MEMTOP_SHM_DIR.
"""

import os
import stat
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def test(args):
    ctx = e2elib.Ctx(args)
    demo = e2elib.start_preloaded(ctx, [args.demo, "2"])
    try:
        seg = e2elib.wait_segment(ctx, demo)
        st = os.stat(seg)
        check(stat.S_ISREG(st.st_mode), "%s is not a regular file" % seg)
        check(stat.S_IMODE(st.st_mode) == 0o600,
              "%s has mode %o, expected 600" % (seg, stat.S_IMODE(st.st_mode)))
        check(st.st_uid == os.getuid(), "%s is owned by uid %d, not %d" %
              (seg, st.st_uid, os.getuid()))
        check(ctx.segments() == ["memtop-%d" % demo.pid],
              "expected exactly the demo's segment, found %s" % ctx.segments())
        rc = demo.wait(timeout=60)
        check(rc == 0, "memtop-demo under the preload exited %s; stderr:\n%s" %
              (rc, demo.stderr.read()))
        check(not os.path.exists(seg), "%s still exists after a clean exit" % seg)
    finally:
        e2elib.stop(demo)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
