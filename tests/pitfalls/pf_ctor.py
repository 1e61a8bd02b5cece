#!/usr/bin/env python3
"""Pitfall 2: allocations in .preinit_array, constructors (program and a
linked library), atexit handlers and destructors.  The program must behave
the same (event order, exit code 5); allocations made once tracking runs
(constructors of the program, atexit) must be counted exactly.  While it
runs, its segment must be in MEMTOP_SHM_DIR: the preinit allocation comes
before libc has set up environ, when getenv() still returns NULL."""
import os
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker  # noqa: E402


def live_segment_location(t):
    """Runs pf_ctor hold preloaded; returns a complaint or None."""
    shm = t.shm_dir("shm-live")
    p = t.popen_preloaded([t.prog("pf_ctor"), "hold"], shm)
    pid = None
    for line in p.stdout:
        if line.startswith("pid "):
            pid = int(line.split()[1])
            break
    where = None
    for _ in range(200):
        if pid is None:
            break
        if os.path.exists(os.path.join(shm, "memtop-%d" % pid)):
            where = "ok"
            break
        if os.path.exists("/dev/shm/memtop-%d" % pid):
            where = "/dev/shm"
            break
        time.sleep(0.05)
    p.communicate("", timeout=60)
    if pid is None:
        return "pf_ctor hold never printed its pid (exit %s)" % p.returncode
    if where == "/dev/shm":
        return ("the segment went to /dev/shm/memtop-%d, not MEMTOP_SHM_DIR: the settings were "
                "read in the preinit allocation, before environ was set up" % pid)
    if where is None:
        return "no segment memtop-%d appeared in MEMTOP_SHM_DIR within 10 s" % pid
    return None

t = Test("ctor")
snap = t.run_all([t.prog("pf_ctor")], 5)
if snap:
    t.check_marker(snap, 3019, "constructor(101)", alloc=1, free=1)
    t.check_marker(snap, 3023, "constructor", alloc=1, free=1)
    t.check_marker(snap, 3037, "atexit handler", alloc=1, free=1)
    t.check_marker(snap, 3011, "library constructor", alloc=1, free=1)
    # Before libmemtop's own constructor (preinit) or after the final
    # publish (late destructors): counted or not, but never half-counted.
    for size, what in ((3001, "preinit"), (3041, "destructor"), (3049, "library destructor"),
                       (3013, "library ctor->dtor block")):
        m = marker(snap, size)
        t.log("%s (%d bytes): alloc %d free %d" % (what, size, m["alloc_count"], m["free_count"]))
        t.check(m["alloc_count"] <= 1 and m["free_count"] <= m["alloc_count"],
                "%s: alloc %d free %d" % (what, m["alloc_count"], m["free_count"]))
if t.have_lib:
    problem = live_segment_location(t)
    t.check(problem is None, "live pf_ctor: %s" % problem)
t.finish()
