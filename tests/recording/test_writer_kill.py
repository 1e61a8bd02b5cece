"""test_writer_kill.py -- crash safety.  A target recording from start is
SIGKILLed after a few seconds: its file (never finalized) decodes up to its
last complete frame with events in it and no error.  Then the file is cut at
many points (as a full disk or a kill during a write would): every cut
decodes without error to a prefix of the frames, and says "truncated"
unless the cut falls on a frame boundary.  With --memtop, `memtop -f CUT
--batch` on every cut either reads it (exit 0) with a duration line that
adds up (end - start, never an end before the start: a cut before the first
timed record lasts 0 s) or refuses it in one line naming the file (exit 1)."""
import os
import re
import signal
import subprocess
import time

from test_writer_common import args, check, dump, env, fail

DURATION = re.compile(r"^duration: (\d+\.\d{3})s \((\d+\.\d{3})s to (\d+\.\d{3})s\), ", re.M)


def batch_duration(a, path, longest):
    """None when `memtop -f path --batch` is right about the cut, else what is wrong."""
    r = subprocess.run([a.memtop, "-f", path, "--batch"], capture_output=True, text=True,
                       timeout=120)
    lines = r.stderr.strip().splitlines()
    if r.returncode == 1:
        ok = len(lines) == 1 and lines[0].startswith("memtop: %s: " % path) and not r.stdout
        return None if ok else "exit 1 without one line naming the file: %s" % lines[:2]
    m = DURATION.search(r.stdout)
    if r.returncode != 0 or not m:
        return "exit %d, no duration line: %s" % (r.returncode, lines[:2])
    d, s, e = (float(x) for x in m.groups())
    if e < s or abs((e - s) - d) > 0.0015 or d > longest:
        return m.group(0)
    return None

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
    wrong = a.memtop and batch_duration(a, cut, 60.0)
    if wrong:
        bad.append((n, "--batch: " + wrong))
check(not bad, "every cut of the file decodes to its complete frames%s %s" %
      (", --batch's duration adds up" if a.memtop else "", bad[:3]))
check(prev_frames >= info["frames"] - 1, "the longest cut keeps all but the last frame")
