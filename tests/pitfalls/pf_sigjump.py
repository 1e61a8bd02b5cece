#!/usr/bin/env python3
"""A signal handler's free waits in memtop's deferral queue, and a second
signal's handler siglongjmps out of the first between the queue slot's
take and its write (progs/pf_sigjump.c; MEMTOP_TEST_DEFER_SIGNAL puts that
signal right there).  The hook's drain must skip the slot that was never
written, not free what an earlier handler left in it again (the program's
allocator dies on a double free), nor free garbage.  Plain, the program's
handlers free at once (no jump: 'ok 2 0'); tracked, round 1's free is
done and round 2's left ('ok 1 1')."""
import signal
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("sigjump")
prog = t.prog("pf_sigjump")
env = {"MEMTOP_TEST_DEFER_SIGNAL": str(int(signal.SIGUSR2))}
plain = t.run_plain([prog])
t.expect(plain, 0, "ok 2 0\n")
if t.have_lib:
    res = t.run_preloaded([prog], t.shm_dir(), env)
    t.expect(res, 0, "ok 1 1\n")
    res, snap = t.run_snapshot([prog], t.shm_dir("shm-tracked"), env)
    t.expect(res, 0, "ok 1 1\n")
    t.check_snapshot(snap, res.label)
t.finish()
