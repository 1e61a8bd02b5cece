"""test_writer_cut.py -- a recording truncated while being written (`: >
f.dat`, truncate -s 0) stops, and says why, instead of writing on at its
old offset (which left a sparse file whose head is zeros: no recording).

 - MEMTOP_RECORD: memtop-demo's file cut to 0 bytes 1.2 s in: the target
   runs on and exits 0, its stderr says "recording stopped: its file was
   truncated while being written", and the file stays empty (nothing more
   is written, not even END);
 - `memtop -p PID --record FILE`, FILE cut 1.2 s in: memtop says the
   target's status, "the file was truncated while being written", not a
   disk's write error; the file stays empty."""
import os
import signal
import subprocess
import time

from test_writer_common import args, check, env, start

a = args()

rec = os.path.join(a.workdir, "cut.dat")
t = start([a.demo, "4"], env=env(a, MEMTOP_RECORD=rec), stdout=subprocess.DEVNULL,
          stderr=subprocess.PIPE, text=True)
time.sleep(1.2)
check(os.path.getsize(rec) > 0, "the recording is being written (%d bytes)" % os.path.getsize(rec))
os.truncate(rec, 0)
_, err = t.communicate(timeout=60)
check(t.returncode == 0, "the target runs on and exits 0 (%d)" % t.returncode)
check("recording stopped: its file was truncated while being written" in err,
      "the target says its recording stopped because the file was truncated: %r" % err[-400:])
check(os.path.getsize(rec) == 0,
      "nothing more is written to the cut file (%d bytes, a hole then the rest before)" %
      os.path.getsize(rec))

if a.memtop:
    rec2 = os.path.join(a.workdir, "cut-attached.dat")
    t = start([a.demo, "60"], env=env(a), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    m = start([a.memtop, "-p", str(t.pid), "--record", rec2],
              env=dict(os.environ, MEMTOP_SHM_DIR=a.workdir), stdout=subprocess.PIPE,
              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while (not os.path.exists(rec2) or os.path.getsize(rec2) == 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.2)
    os.truncate(rec2, 0)
    time.sleep(2.5)
    if m.poll() is None:
        m.send_signal(signal.SIGINT)
    _, merr = m.communicate(timeout=60)
    t.kill()
    t.wait()
    check("the file was truncated while being written" in merr,
          "memtop --record says the file was truncated, not a write error: %r" % merr[-400:])
    check(os.path.getsize(rec2) == 0, "the attached recording's cut file stays empty (%d bytes)" %
          os.path.getsize(rec2))
print("all checks passed")
