#!/usr/bin/env python3
"""Two threads exec at once, one fails while the other is still inside its
exec (progs/pf_exec_race.c, with the spy progs/pf_exec_spy.c preloaded
after libmemtop.so to keep the second exec inside the call).

 - publisher still in its first wait (MEMTOP_START_MS=500): the failed
   exec must not let the held publisher go while the other exec may still
   replace the image: no segment appears meanwhile, none is left behind
   when the other exec succeeds, and the publisher runs (creates its
   segment) once both have failed;
 - segment made at the start (MEMTOP_START_MS=0): the failed exec leaves
   the segment marked exited and exec'd while the other is inside its
   exec; when that one succeeds, the segment left says so; when it fails
   too, the publisher runs again (restarted once, not twice or never)."""
import os
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, segments  # noqa: E402

REPEAT = 2
EXITED, EXECED = 1, 8

t = Test("exec_race")
spy = os.path.join(os.path.dirname(t.bin), "lib", "libmtp_exec_spy.so")
for mode, out in (("exec", ""), ("fail", "ok\n")):
    for start_ms in ("500", "0"):
        cmd = [t.prog("pf_exec_race"), mode] + (["started"] if start_ms == "0" else [])
        plain = t.run_plain(cmd)
        if not t.expect(plain, 0, out) or not t.have_lib:
            continue
        for i in range(REPEAT):
            shm = t.shm_dir("shm-%s-%s-%d" % (mode, start_ms, i))
            pre = t.run_preloaded(cmd, shm, {"MEMTOP_START_MS": start_ms,
                                             "LD_PRELOAD": t.lib + ":" + spy})
            t.expect(pre, 0, out)
            if mode == "fail" or start_ms != "0":
                t.check_no_segments(shm, pre.label)
                continue
            # The exec'd image has no memtop: the segment stays, marked.
            left = [t.describe(shm, n) for n in segments(shm)]
            m = re.search(r"flags (\d+)", left[0]) if len(left) == 1 else None
            t.check(m and int(m.group(1)) & (EXITED | EXECED) == EXITED | EXECED,
                    "%s: expected one segment marked exited and exec'd, got %s"
                    % (pre.label, left))
t.finish()
