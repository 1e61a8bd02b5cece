"""test_writer_kill.py -- crash safety.  A target recording from start is
SIGKILLed after a few seconds: its file (never finalized) decodes up to its
last complete frame with events in it and no error.  Then the file is cut at
many points (as a full disk or a kill during a write would): every cut
decodes without error to a prefix of the frames, and says "truncated"
unless the cut falls on a frame boundary."""
import os
import signal
import subprocess
import time

from test_writer_common import args, check, dump, env, fail

a = args()
rec = os.path.join(a.workdir, "killed.dat")
target = subprocess.Popen([a.demo, "60"], env=env(a, MEMTOP_RECORD=rec),
                          stdout=subprocess.DEVNULL)
time.sleep(3.2)
target.send_signal(signal.SIGKILL)
target.wait(timeout=30)
check(target.returncode == -signal.SIGKILL, "the target was killed")
info, _, _ = dump(a, rec)
check(info["finalized"] == 0, "the killed recording is not finalized")
check(info["frames"] >= 3, "frames were flushed while running (%d in ~3 s)" % info["frames"])
check(info["allocs"] > 1000 and info["frees"] > 1000,
      "events up to the last flush decode (%d allocs)" % info["allocs"])
check(info["bad_trace_refs"] == 0, "every event refers to a defined trace")

data = open(rec, "rb").read()
cut = os.path.join(a.workdir, "cut.dat")
prev_frames, bad = -1, []
step = max(1, len(data) // 150)
for n in list(range(32, len(data), step)) + [len(data) - 1]:
    with open(cut, "wb") as f:
        f.write(data[:n])
    ci, _, r = dump(a, cut, expect_ok=False)
    if r.returncode != 0:
        bad.append((n, r.stderr.strip()))
        continue
    if ci["frames"] < prev_frames or (ci["tail_bytes"] > 0) != (ci["truncated"] == 1):
        bad.append((n, "frames %d tail %d" % (ci["frames"], ci["tail_bytes"])))
    prev_frames = ci["frames"]
check(not bad, "every cut of the file decodes to its complete frames %s" % bad[:3])
check(prev_frames >= info["frames"] - 1, "the longest cut keeps all but the last frame")
