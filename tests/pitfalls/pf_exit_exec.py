#!/usr/bin/env python3
"""Exit while another thread's exec fails (progs/pf_exit_exec.c): exit
holds a publisher still in its first wait; the failed exec must not let it
go on to create a segment after exit, which nothing would remove.  The
exit code is kept and no segment is left, every time."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

REPEAT = 3

t = Test("exit_exec")
cmd = [t.prog("pf_exit_exec")]
plain = t.run_plain(cmd)
if t.expect(plain, 0) and t.have_lib:
    for i in range(REPEAT):
        shm = t.shm_dir("shm-%d" % i)
        pre = t.run_preloaded(cmd, shm, {"MEMTOP_START_MS": "100"})
        t.expect(pre, 0, plain.out)
        t.check_no_segments(shm, pre.label)
t.finish()
