#!/usr/bin/env python3
"""fork while other threads are inside libunwind (unw_forkwalk.c): every
fork child must allocate and exit.  Before, a child forked while a walker
held libunwind's global cache mutex (Debian's libunwind turns the
per-thread policy into a global one) or the loader's dl_load_write_lock
(glibc does not reset it in the child; libunwind's every step takes it)
hung for ever; the program kills a child that hangs and fails.  Run in the
default mode and with MEMTOP_UNWIND=libunwind."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test  # noqa: E402

t = Test("unwind_fork_walk")
cmd = [t.prog("unw_forkwalk")]
plain = t.run_plain(cmd, timeout=120)
if t.expect(plain, 0, "forks 300\n") and t.have_lib:
    for mode in ("auto", "libunwind"):
        res = t.run_preloaded(cmd, t.shm_dir("shm-" + mode), {"MEMTOP_UNWIND": mode},
                              timeout=120)
        t.expect(res, 0, "forks 300\n")
t.finish()
