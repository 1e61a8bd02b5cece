"""test_writer_quick_restart.py -- a START right after a
STOP (within the idle writer's 5 ms sleep) must get a writer thread of its
own; 6 restarts on a running target, each with the old writer thread frozen
(ptrace, that thread only) from before the STOP until after the START; then the
last recording is stopped and must be finalized."""
import os
import subprocess
import time

from test_writer_common import args, check, ctl, dump, env, wait_segment

a = args()
# The demo runs long enough for a loaded machine; it is killed at the end.
target = subprocess.Popen([a.demo, "120"], env=env(a), stdout=subprocess.DEVNULL)
wait_segment(a, target.pid)
end = time.time() + 30  # the segment answers (not a fixed sleep)
while ctl(a, target.pid, "status")[0] != 0 and time.time() < end:
    time.sleep(0.05)
try:
    out = os.path.join(a.workdir, "out")
    os.makedirs(out)
    client = os.path.join(a.progs, "writer_restart")
    r = subprocess.run([client, a.workdir, str(target.pid), out, "6"], capture_output=True, text=True,
                       timeout=600)
    print(r.stdout.strip())
    check(r.returncode == 0 and "could not freeze" not in r.stdout,
          "every START after a STOP has a writer thread")
    rc, res = ctl(a, target.pid, "stop")
    check(rc == 0, "the last recording stops: %s" % res.get("msg"))
finally:  # a failed check must not leave the demo holding ctest's output
    target.kill()
    target.wait()
info, _, _ = dump(a, os.path.join(out, "r5.dat"))
check(info["finalized"] == 1 and info["end_reason"] == 1, "the last file is finalized")
