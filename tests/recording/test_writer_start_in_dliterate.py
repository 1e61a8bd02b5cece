"""test_writer_start_in_dliterate.py -- a recording started
mid-run while another thread allocates inside a dl_iterate_phdr callback
(holding the loader lock) must not deadlock.  The start must answer, the
allocating thread must keep running, and the stop must finalize the file
(with the initial state)."""
import os
import subprocess
import time

from test_writer_common import args, check, ctl, dump, env, wait_segment

a = args()
prog = os.path.join(a.progs, "writer_scenarios")
target = subprocess.Popen([prog, "dliter", "60"], env=env(a), stdout=subprocess.PIPE, text=True)
pid = int(target.stdout.readline())
wait_segment(a, pid)
time.sleep(0.5)
rec = os.path.join(a.workdir, "dliter.dat")
try:
    r = subprocess.run([a.ctl, a.workdir, str(pid), "start", rec], capture_output=True, text=True,
                       timeout=20)
    started = r.returncode == 0
except subprocess.TimeoutExpired:
    started = False
if not started:
    target.kill()
check(started, "the start answers while a thread allocates inside dl_iterate_phdr")
target.stdout.readline()  # skip to a whole second
time.sleep(1.5)
rc, out = ctl(a, pid, "stop")
check(rc == 0 and "bytes written" in out.get("msg", ""), "the stop answers: %s" % out.get("msg"))
# The thread still iterates after the recording: read two more seconds.
iters = []
for _ in range(2):
    line = target.stdout.readline()
    if line.startswith("iters "):
        iters.append(int(line.split()[1]))
target.kill()
target.wait()
check(len(iters) == 2 and all(i > 0 for i in iters), "the dl_iterate_phdr thread goes on: %s"
      % iters)
info, rows, _ = dump(a, rec)
check(info["finalized"] == 1 and info["end_reason"] == 1, "finalized, END reason stop")
check(info["process_flags"] & 1 == 1 and info.get("records_7", 0) == 2,
      "mid-run, with initial and final state sets")
check(info["allocs"] > 0, "events recorded (%d)" % info["allocs"])
# (No replay == final check: this thread allocates without pause, also while
# the stop switches recording off and reads the final state.)
