"""test_writer_control.py -- start and stop a recording of a running
target through the control channel (MT_CMD_RECORD_START/STOP), as the
viewer's `r` key does.  Checks: the answer names the file; the header's
recording status (state, path, growing size, events); a second start is
refused ("already recording"); an existing file is never overwritten; a
relative path is refused; a stop naming another recording number, or a
malformed one, is refused and the recording runs on; the stopped file is
finalized (END reason stop)
with an initial state (mid-run), and replaying initial state + events gives
exactly the FINAL counters of every trace; the file is mode 0600."""
import os
import subprocess
import time

from test_writer_common import args, check, consistent, ctl, dump, env, mode_ok, wait_segment

a = args()
target = subprocess.Popen([a.demo, "6"], env=env(a), stdout=subprocess.DEVNULL)
wait_segment(a, target.pid)
time.sleep(0.5)
rec = os.path.join(a.workdir, "mid.dat")
existing = os.path.join(a.workdir, "existing.dat")
with open(existing, "w") as f:
    f.write("keep me")

rc, out = ctl(a, target.pid, "start", existing)
check(rc != 0 and "exists" in out.get("msg", ""), "an existing file is refused: %s" % out.get("msg"))
check(open(existing).read() == "keep me", "the existing file is untouched")
rc, out = ctl(a, target.pid, "start", "relative.dat")
check(rc != 0 and "absolute" in out.get("msg", ""), "a relative path is refused")

rc, out = ctl(a, target.pid, "start", rec)
check(rc == 0 and out.get("msg") == rec, "start answers OK with the path: %s" % out.get("msg"))
check(out.get("rec_state") == "1" and out.get("rec_path") == rec, "the header shows recording")
rc, out = ctl(a, target.pid, "start", os.path.join(a.workdir, "other.dat"))
check(rc != 0 and "already recording" in out.get("msg", ""), "a second start is refused")
time.sleep(1.5)
rc, st1 = ctl(a, target.pid, "status")
time.sleep(1.2)
rc, st2 = ctl(a, target.pid, "status")
check(int(st2["rec_events"]) > int(st1["rec_events"]) > 0, "events written grow: %s -> %s"
      % (st1["rec_events"], st2["rec_events"]))
check(int(st2["rec_bytes"]) > 32, "bytes written shown: %s" % st2["rec_bytes"])
check(st2["rec_line"].startswith("REC " + rec), "status line: " + st2["rec_line"])

# a stop for another recording number (a viewer that saw recording 2, not
# this first one) or a malformed one leaves it running
for arg, want in (("recording=2", "recording 2 is over (recording 1 runs"),
                  ("recording=x", "bad argument"), ("recording=", "bad argument"),
                  ("/tmp/x.dat", "bad argument")):
    rc, out = ctl(a, target.pid, "stop", arg)
    check(rc != 0 and want in out.get("msg", "") and out.get("rec_state") == "1",
          "stop %r is refused (%r) and the recording runs on (state %s)" %
          (arg, out.get("msg"), out.get("rec_state")))
rc, out = ctl(a, target.pid, "stop", "recording=1")
check(rc == 0 and "bytes written" in out.get("msg", ""), "stop answers with the size: %s"
      % out.get("msg"))
check(out.get("rec_state") == "2", "the header shows stopped")
check(int(out["rec_bytes"]) == os.path.getsize(rec), "the size shown is the file's")
rc, out = ctl(a, target.pid, "stop")
check(rc != 0 and "not recording" in out.get("msg", ""), "stop when not recording is refused")
target.wait(timeout=30)
check(target.returncode == 0, "the target exits 0")

check(mode_ok(rec), "the recording is mode 0600")
info, rows, _ = dump(a, rec, traces=True)
check(info["finalized"] == 1 and info["end_reason"] == 1, "finalized, END reason stop")
check(info["truncated"] == 0, "not truncated")
check(info["process_flags"] & 1 == 1, "PROCESS says mid-run")
check(info.get("records_7", 0) == 2 and info["has_final"] == 1, "initial and final state sets")
check(info["live_blocks"] > 256, "the initial state lists the live blocks (%d)" % info["live_blocks"])
check(info["allocs"] > 0 and info["frees"] > 0, "allocation and free events (%d, %d)"
      % (info["allocs"], info["frees"]))
check(info["end_events"] == info["allocs"] + info["frees"], "END counts the events written")
check(consistent(info, rows) is None, "initial state + events (+ lost) == final state for all %d "
      "traces (%s)" % (len(rows), consistent(info, rows)))
