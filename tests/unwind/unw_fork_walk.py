#!/usr/bin/env python3
"""fork while other threads are inside libunwind (unw_forkwalk.c): every
fork child must allocate and exit.  Before, a child forked while a walker
held libunwind's global cache mutex (Debian's libunwind turns the
per-thread policy into a global one) or the loader's dl_load_write_lock
(glibc does not reset it in the child; libunwind's every step takes it)
hung for ever; the program kills a child that hangs and fails.  Run in the
default mode and with MEMTOP_UNWIND=libunwind.

Then with MEMTOP_TEST_LOADER_HOLD_US: each of memtop's own calls of
dl_iterate_phdr (the publisher's poll for new modules every 20 ms, the
recording writer's module check every pass) holds the loader's lock 2 ms,
so that forks meet those holds.  Before the loader gate
(core_loader_gate.c) covered them, a child forked in one hung at its first
libunwind walk (fork 9 of 300 in the first run; once in CI by chance, at
fork 71).  Once without a recording, once with one (MEMTOP_RECORD: each
child starts its own recording, whose module map iterates too)."""
import glob
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
    rec_dir = t.path("rec-hold")
    os.makedirs(rec_dir, exist_ok=True)
    for old in glob.glob(os.path.join(rec_dir, "*")):
        os.unlink(old)
    for tag, extra in (("hold", {}),
                       ("hold-record", {"MEMTOP_RECORD": os.path.join(rec_dir, "rec.%p.dat")})):
        extra["MEMTOP_TEST_LOADER_HOLD_US"] = "2000"
        res = t.run_preloaded(cmd, t.shm_dir("shm-" + tag), extra, timeout=120)
        t.expect(res, 0, "forks 300\n")
    forks = glob.glob(os.path.join(rec_dir, "rec.*.fork.dat"))
    t.check(len(forks) == 300, "hold-record: %d fork children's recordings (want 300)" % len(forks))
t.finish()
