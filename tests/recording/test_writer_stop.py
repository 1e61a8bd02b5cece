"""test_writer_stop.py -- stopping a recording (MT_CMD_RECORD_STOP) while
4 threads allocate without pause.  The FINAL state must be consistent with
the events: replaying the initial state + the events gives the FINAL
counters of every trace, or, if some events could not be recorded, LOST
records and END's events_dropped account for the difference exactly.
(Before: stop switched recording off, drained, then read the counters:
allocations in between were in FINAL but in no event, nothing dropped.)
Three start/stop cycles on one target."""
import os
import subprocess
import time

from test_writer_common import (approx_events, args, check, consistent, ctl, dump, env,
                                wait_segment)

a = args()
target = subprocess.Popen([os.path.join(a.progs, "writer_busy"), "4", "30"], env=env(a),
                          stdout=subprocess.PIPE, text=True)
pid = int(target.stdout.readline())
wait_segment(a, pid)
time.sleep(0.3)
for cycle in range(3):
    rec = os.path.join(a.workdir, "stop-%d.dat" % cycle)
    rc, out = ctl(a, pid, "start", rec)
    check(rc == 0, "start %d answers: %s" % (cycle, out.get("msg")))
    approx = approx_events(out)
    # Stop once the threads have been recorded allocating (events are
    # allocations and frees), not after a fixed time: a loaded machine may
    # not run them at all for a while.
    end = time.time() + 60
    while int(ctl(a, pid, "status")[1].get("rec_events", 0)) < 4000 and time.time() < end:
        time.sleep(0.1)
    rc, out = ctl(a, pid, "stop")
    check(rc == 0, "stop %d answers: %s" % (cycle, out.get("msg")))
    info, rows, _ = dump(a, rec, traces=True)
    check(info["finalized"] == 1 and info["end_reason"] == 1 and info["has_final"] == 1,
          "cycle %d: finalized by the stop, with a FINAL state" % cycle)
    check(info["allocs"] > 1000, "cycle %d: events while threads allocate (%d)"
          % (cycle, info["allocs"]))
    why = consistent(info, rows, approx)
    check(why is None, "cycle %d: initial state + events (+ lost) == FINAL for all %d traces "
          "(%s; %d dropped)" % (cycle, len(rows), why, info["end_dropped"]))
target.kill()
target.wait(timeout=30)
