"""check_record_lease.py -- a recording `r` started does not outlive the viewer.

`memtop -p PID` of a preloaded memtop-demo run with MEMTOP_TEST_LEASE_MS=2000
(the lease's bound; 10 s by default: docs/shm-protocol.md, "Recording
lease").  Asserts:
  - the viewer renews: after `r`, the header still shows "● REC" after
    3x the bound;
  - q stops the recording at once (it does not run on behind the viewer):
    `memtop -f FILE --batch` says "stopped", not "not finalized";
  - a second viewer's `r`, then SIGKILL of that memtop: within the bound
    (plus slack) the file is finalized by the target itself, with the end
    "stopped: the viewer that started it was gone" (END reason lease);
    the demo still runs;
  - a third viewer's `r`, then SIGSTOP of that memtop: the target finalizes
    the file after the bound; after SIGCONT the viewer's status line says
    "recording ended: the target stopped it ..." (no crash), and q exits 0.
Fails without the lease: after the SIGKILL the file stays "not finalized"
(the recording runs on)."""
import os
import re
import signal
import time

import tuilib
from tuilib import check, frame, header_line

LEASE_S = 2.0
REC = re.compile(r"● REC (\S+\.dat) ([\d.]+ ?(?:B|KiB|MiB))")


def batch(t, dat):
    rc, out, err = t.run_memtop(["-f", dat, "--batch"])
    return rc, out + err


def wait_batch(t, dat, text, timeout):
    end = time.monotonic() + timeout
    while True:
        rc, out = batch(t, dat)
        if rc == 0 and text in out:
            return out
        check(time.monotonic() < end, "memtop -f %s --batch does not say %r: %s"
              % (dat, text, out[-400:]))
        time.sleep(0.2)


def viewer(t):
    """The memtop of this test's tmux pane (other tests may run memtop too):
    [its pid]."""
    pane = t.pane_pid()
    mine = [p for p in [pane] + t.children_of(pane) if p in t.procs_with_argv0(t.memtop)]
    check(len(mine) == 1, "one memtop viewer in the pane: %s" % mine)
    return mine


def test(t):
    t.env["MEMTOP_TEST_LEASE_MS"] = str(int(LEASE_S * 1000))
    demo = t.start_preloaded_demo(120)
    t.start([t.memtop, "-p", str(demo.pid)], width=200)
    shown, dat = t.record_key("r")
    time.sleep(3 * LEASE_S + 0.5)
    s = t.screen()
    check("● REC" in header_line(s, 3), "still recording after 3x the bound:\n" + frame(s))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after q" % rc)
    out = wait_batch(t, dat, "stopped", 5)
    check("not finalized" not in out and "viewer that started it was gone" not in out,
          "q stopped the recording itself: " + out[:300])

    t.start([t.memtop, "-p", str(demo.pid)], width=200)
    t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and "recorded " in header_line(s, 3),
               "RUNNING and the first recording in the header")
    t.keys("r")
    m = t.wait_for(lambda s: REC.search(header_line(s, 3)), "'● REC <path> <size>' after r")
    dat2 = t.default_file(m.group(1), demo.pid, ".dat", "the header")
    check(dat2 != dat, "a second file")
    time.sleep(0.5)
    viewers = viewer(t)
    os.kill(viewers[0], signal.SIGKILL)
    killed = time.monotonic()
    wait_batch(t, dat2, "stopped: the viewer that started it was gone", LEASE_S + 6)
    check(time.monotonic() - killed >= LEASE_S - 0.5, "not before the bound")
    check(demo.poll() is None, "the demo still runs")

    t.start([t.memtop, "-p", str(demo.pid)], width=200)
    t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and "recorded " in header_line(s, 3),
               "RUNNING and the last recording in the header")
    time.sleep(1.1)  # the default file name has the second in it
    t.keys("r")
    m = t.wait_for(lambda s: REC.search(header_line(s, 3)), "'● REC <path> <size>' after r")
    dat3 = t.default_file(m.group(1), demo.pid, ".dat", "the header")
    viewers = viewer(t)
    os.kill(viewers[0], signal.SIGSTOP)
    wait_batch(t, dat3, "stopped: the viewer that started it was gone", LEASE_S + 6)
    os.kill(viewers[0], signal.SIGCONT)
    t.wait_for(lambda s: "recording ended: the target stopped it" in s,
               "the status line saying the target ended the recording")
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after q" % rc)


tuilib.main(test, __doc__)
