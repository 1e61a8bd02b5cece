"""test_writer_start_io_after_pause.py -- while allocation calls
wait at the gate of a mid-run start, the recorder only copies the state;
it compresses and writes the file after recording switched on.  The
target (writer_pause_probe) checks at every write to the .dat file that
another thread can malloc+free; none may be blocked.  200,000 live blocks
make the initial state span many writes."""
import os
import subprocess
import time

from test_writer_common import args, check, ctl, dump, env, wait_segment

a = args()
prog = os.path.join(a.progs, "writer_pause_probe")
target = subprocess.Popen([prog, "200000", "5"], env=env(a), stdout=subprocess.PIPE, text=True)
pid = int(target.stdout.readline())
wait_segment(a, pid)
time.sleep(0.5)
rec = os.path.join(a.workdir, "pause.dat")
rc, out = ctl(a, pid, "start", rec)
check(rc == 0, "start answers: %s" % out.get("msg"))
time.sleep(1.0)
rc, out = ctl(a, pid, "stop")
check(rc == 0, "stop answers: %s" % out.get("msg"))
lines, _ = target.communicate(timeout=60)
res = [l.split() for l in lines.splitlines() if l.startswith("probes ")]
check(len(res) == 1, "the target reports its probes")
probes, blocked = int(res[0][1]), int(res[0][3])
check(probes > 0, "writes to the recording were probed (%d)" % probes)
check(blocked == 0, "no write to the file while allocation calls wait (%d blocked)" % blocked)
info, _, _ = dump(a, rec)
check(info["finalized"] == 1 and info["live_blocks"] >= 200000,
      "finalized, the initial state lists the live blocks (%d)" % info["live_blocks"])
check(info["end_dropped"] == 0, "exact: no event counted as dropped (%d)" % info["end_dropped"])
# (No replay == final check here: the probe allocates during the stop's own
# writes, after recording switched off, which the final state counts.)
