#!/usr/bin/env python3
"""Two threads exec at once, one fails while the other is still inside its
exec (progs/pf_exec_race.c, with the spy progs/pf_exec_spy.c preloaded
after libmemtop.so to keep the second exec inside the call).  The failed
exec must not let the held publisher go while the other exec may still
replace the image: no segment appears meanwhile, none is left behind when
the other exec succeeds, and the publisher runs (creates its segment) once
both have failed."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

REPEAT = 2

t = Test("exec_race")
spy = os.path.join(os.path.dirname(t.bin), "lib", "libmtp_exec_spy.so")
for mode, out in (("exec", ""), ("fail", "ok\n")):
    cmd = [t.prog("pf_exec_race"), mode]
    plain = t.run_plain(cmd)
    if not t.expect(plain, 0, out) or not t.have_lib:
        continue
    for i in range(REPEAT):
        shm = t.shm_dir("shm-%s-%d" % (mode, i))
        pre = t.run_preloaded(cmd, shm, {"MEMTOP_START_MS": "500",
                                         "LD_PRELOAD": t.lib + ":" + spy})
        t.expect(pre, 0, out)
        t.check_no_segments(shm, pre.label)
t.finish()
