"""test_writer_handover.py -- a START that finds the previous session's
writer thread still running hands the new session to it; the writer must not
leave meanwhile (a session without a writer thread: the target's own threads
would compress and write the file).  MEMTOP_TEST_HANDOVER makes the worst
case happen every time: the writer told to stop waits, before deciding to
leave, until a START finds it still running, and that START waits for the
writer's decision before handing the session over (record_thread.c).  Both
run under the writer's lock, so the START waits in vain (1 s) and the writer
then stays; without the lock the writer leaves and the START hands the
session to a thread that is gone."""
import os
import subprocess
import time

from test_writer_common import args, check, ctl, dump, env, wait_segment


def writer_threads(pid):
    """Threads of pid named memtop-record."""
    n = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                n += f.read().startswith("memtop-record")
        except OSError:
            pass
    return n


a = args()
log = os.path.join(a.workdir, "log")
target = subprocess.Popen([a.demo, "120"], stdout=subprocess.DEVNULL,
                          env=env(a, MEMTOP_TEST_HANDOVER=1, MEMTOP_LOG="info",
                                  MEMTOP_LOG_FILE=log))
wait_segment(a, target.pid)
end = time.time() + 30  # the segment answers (not a fixed sleep)
while ctl(a, target.pid, "status")[0] != 0 and time.time() < end:
    time.sleep(0.05)
r1 = os.path.join(a.workdir, "r1.dat")
try:
    rc, res = ctl(a, target.pid, "start", os.path.join(a.workdir, "r0.dat"))
    check(rc == 0, "the first recording starts: %s" % res.get("msg"))
    rc, res = ctl(a, target.pid, "stop")
    check(rc == 0, "it stops: %s" % res.get("msg"))
    rc, res = ctl(a, target.pid, "start", r1)
    check(rc == 0, "the second recording starts: %s" % res.get("msg"))
    with open(log) as f:
        text = f.read()
    check("test hand-over: the start found the writer thread running" in text,
          "the START found the old writer still running (the case under test)")
    check("test hand-over: the writer thread leaves" not in text,
          "the old writer stayed for the new session")
    end = time.time() + 20
    while not writer_threads(target.pid) and time.time() < end:
        time.sleep(0.05)
    check(writer_threads(target.pid) == 1, "the new session has one writer thread")
    rc, res = ctl(a, target.pid, "stop")
    check(rc == 0, "the second recording stops: %s" % res.get("msg"))
finally:  # a failed check must not leave the demo holding ctest's output
    target.kill()
    target.wait()
info, _, _ = dump(a, r1)
check(info["finalized"] == 1 and info["end_reason"] == 1, "the second file is finalized")
