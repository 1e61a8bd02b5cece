"""check_record_others.py -- r asks before it stops a recording another memtop holds.

Why it exists: one r in any viewer stopped whatever recording ran: one that
`memtop -p PID --record FILE` held (which then said "process N ended; the
recording is complete" while N ran on), another viewer's, or the one a
service made of itself (MEMTOP_RECORD).  Asserts, on a preloaded memtop-demo
that `memtop -p PID --record` records:
  - the viewer's header shows the recording ("● REC");
  - a first r stops nothing: the status line says "another memtop records
    into ...: r again within 3 s stops it", the recorder still runs and the
    header still shows "● REC" a second later;
  - a second r within the 3 s stops it: the header no longer shows
    "● REC", and the recorder exits 0 saying "another memtop stopped the
    recording of process N" (not that the process ended; the demo runs);
  - r and q at once (q before the target answered r): the recording the
    viewer started is stopped as it quits (it ran on until its lease's
    bound, 10 s, and held off any other recording meanwhile).
"""
import subprocess
import time

import tuilib
from tuilib import check, frame, header_line


def r_then_q(t, demo):
    t.start([t.memtop, "-p", str(demo.pid)], width=200)
    t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and "● REC" not in header_line(s, 3),
               "RUNNING, no recording")
    t.keys("r", "q")
    check(t.wait_dead() == 0, "memtop exited non-zero after r q")
    rc, out, err = t.run_memtop(["-p", str(demo.pid), "--batch", "-n", "1"])
    running = [ln for ln in out.splitlines() if ln.startswith("recording:") and "so far" in ln]
    check(rc == 0 and not running, "after r q the recording runs on: %s" % (running or err))


def test(t):
    demo = t.start_preloaded_demo(120)
    dat = t.path("cli.dat")
    rec = subprocess.Popen([t.memtop, "-p", str(demo.pid), "--record", dat], env=t.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        t.start([t.memtop, "-p", str(demo.pid)], width=200)
        t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and "● REC" in header_line(s, 3),
                   "RUNNING and the other memtop's recording in the header")
        t.keys("r")
        t.wait_for("r again within 3 s stops it", "the status line asking for a second r")
        s = t.wait_for(lambda s: "another memtop records into" in s and "cli.dat" in s,
                       "whose recording it is, and its file")
        time.sleep(1.0)
        s = t.screen()
        check(rec.poll() is None and "● REC" in header_line(s, 3),
              "one r stopped another memtop's recording (recorder %s):\n%s" %
              (rec.poll(), frame(s)))
        t.keys("r")
        t.wait_for(lambda s: "● REC" not in header_line(s, 3), "the recording stopped by r r")
        out, err = rec.communicate(timeout=30)
        check(rec.returncode == 0 and
              "another memtop stopped the recording of process %d" % demo.pid in err,
              "the recorder exited %d saying: %s" % (rec.returncode, err.strip()))
        check(demo.poll() is None, "the demo still runs")
        t.keys("q")
        check(t.wait_dead() == 0, "memtop exited non-zero after q")
        r_then_q(t, demo)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()


tuilib.main(test, __doc__)
