#!/usr/bin/env python3
"""Pitfall 5: the process ends while worker threads still allocate: main
returns 7, a worker calls _exit(5), or a worker calls exit(6).  No crash or
hang (each run repeated), the exit code preserved, and the final snapshot
exists, is marked exited and is self-consistent.  Also a program that
exits at once (before the publisher thread runs) must still leave a final
snapshot, every time."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, segments  # noqa: E402

MODES = (("return", 7), ("_exit", 5), ("exit", 6))
REPEAT = 3
QUICK_RUNS = 10

t = Test("exit")
for mode, rc in MODES:
    cmd = [t.prog("pf_exit"), mode]
    plain = t.run_plain(cmd)
    if not t.expect(plain, rc) or not t.have_lib:
        continue
    extra = {"MEMTOP_INTERVAL_MS": "10"}
    for i in range(REPEAT):
        shm = t.shm_dir("shm-%s-%d" % (mode, i))
        pre = t.run_preloaded(cmd, shm, extra)
        t.expect(pre, rc, plain.out)
        t.check_quiet(pre)
        if mode != "_exit":
            t.check_no_segments(shm, pre.label)
        elif segments(shm):
            t.log("_exit left its segment: %s" % segments(shm))
    res, snap = t.run_snapshot(cmd, t.shm_dir("shm-%s-tracked" % mode), extra)
    t.expect(res, rc, plain.out)
    snap = t.check_snapshot(snap, "%s (%s)" % (res.label, mode))
    if snap and mode == "return":
        t.check_marker(snap, 2027, "atexit handler", alloc=3, free=3)
quick = [t.prog("pf_exit"), "quick"]
if t.expect(t.run_plain(quick), 3) and t.have_lib:
    missing = 0
    for i in range(QUICK_RUNS):
        res, snap = t.run_snapshot(quick, t.shm_dir("shm-quick"))
        t.expect(res, 3)
        if t.check_snapshot(snap, res.label) is None:
            missing += 1
        else:
            t.check_marker(snap, 2029, "quick exit", alloc=1, free=1)
    t.check(missing == 0, "%d of %d immediately-exiting runs left no final snapshot"
            % (missing, QUICK_RUNS))
t.finish()
