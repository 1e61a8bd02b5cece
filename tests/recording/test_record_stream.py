"""test_record_stream.py -- memtop -p PID --record - (issue 19): the recording
goes to standard output as it grows.  Fails without streaming (memtop would
take "-" for a file name, or refuse it):
  - into a pipe read by this test: what comes out is a whole recording
    (culled here), finalized at Ctrl-C, with no trace of the file left in
    TMPDIR;
  - into a pipe nobody reads: the target goes on running (it never waits
    for memtop), its memory stays bounded, and memtop stops the recording
    once MEMTOP_STREAM_BACKLOG bytes wait unsent, saying so."""
import os
import signal
import subprocess
import threading
import time

from test_writer_common import args, check, dump, env, start

a = args()
prog = os.path.join(a.progs, "writer_cull")
tmp = os.path.join(a.workdir, "tmp")
os.makedirs(tmp)
menv = dict(os.environ, MEMTOP_SHM_DIR=a.workdir, TMPDIR=tmp)

def cpu_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# 1. A pipe that is read.
t = start([prog, "forever"], env=env(a))
time.sleep(1.0)
m = start([a.memtop, "-p", str(t.pid), "--record", "-", "--cull=1"], env=menv,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(3.5)
m.send_signal(signal.SIGINT)
data, errs = m.communicate(timeout=60)
t.kill()
t.wait()
out = os.path.join(a.workdir, "streamed.dat")
open(out, "wb").write(data)
check(m.returncode == 0, "memtop streamed and stopped: %s" % errs.decode()[-300:])
info, rows, _ = dump(a, out, traces=True)
bad = [r for r in rows if r[3] != r[4]]
check(info["finalized"] == 1 and info["truncated"] == 0 and info["record_mode"] == 1 and
      info["culled_blocks"] > 0 and not bad,
      "standard output holds the whole culled recording, finalized (%d bytes)" % len(data))
check(os.listdir(tmp) == [], "nothing left in TMPDIR: %s" % os.listdir(tmp))

# 2. A pipe nobody reads.
t = start([prog, "busy"], env=env(a))
time.sleep(1.0)
r, w = os.pipe()
m = start([a.memtop, "-p", str(t.pid), "--record", "-"],
                     env=dict(menv, MEMTOP_STREAM_BACKLOG="300000"), stdout=w,
                     stderr=subprocess.PIPE)
os.close(w)
# memtop's standard error, read whole by a thread (a peek at the pipe's
# buffer would show only what was buffered first, never the later line).
errs = bytearray()
reader = threading.Thread(target=lambda: [errs.extend(b) for b in iter(
    lambda: os.read(m.stderr.fileno(), 4096), b"")], daemon=True)
reader.start()
deadline = time.time() + 60
while time.time() < deadline and b"bytes behind" not in errs:
    time.sleep(0.5)
check(b"bytes behind" in errs,
      "memtop stopped the recording when the reader fell behind: %s" % bytes(errs[-300:]))
c0, rss0 = cpu_ticks(t.pid), rss_kb(t.pid)
time.sleep(3.0)
c1, rss1 = cpu_ticks(t.pid), rss_kb(t.pid)
# Blocked on the pipe it would run 0 ticks; a busy target on a loaded
# machine (CI: load ~20 on 2 cores) still gets tens.
check(t.poll() is None and c1 > c0 + 3,
      "the target never waits for the stalled reader (%d CPU ticks in 3 s)" % (c1 - c0))
check(rss1 < 200 * 1024 and rss1 < rss0 + 20 * 1024,
      "the target's memory stays bounded (%d -> %d KiB)" % (rss0, rss1))
m.kill()
m.wait()
os.close(r)
t.kill()
t.wait()
check(os.listdir(tmp) == [], "nothing left in TMPDIR: %s" % os.listdir(tmp))
