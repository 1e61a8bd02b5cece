"""check_record_status.py -- `memtop -p PID --record FILE` reports on one line.

Why it exists: the recorder printed "memtop: recording FILE: SIZE, N events"
on a new line every second, about 500 lines for a 9-minute recording in the
user's terminal, and as many in a log.  Asserts, on a preloaded memtop-demo:
  - in a terminal (tmux) after more than 3 s, exactly one status line,
    rewritten in place (its event count grows), and after SIGINT (Ctrl-C) the
    "recorded FILE: ..." summary on a line of its own below it, exit 0;
  - with stderr a pipe (a log) over 3 s, one status line (they come every
    10 s there), not one a second; the summary on stdout as before.
"""
import os
import re
import signal
import subprocess
import time

import tuilib
from tuilib import check, frame

STATUS = re.compile(r"memtop: recording \S+: .*?([\d,]+) events")


def status_lines(screen):
    return [ln for ln in screen.splitlines() if STATUS.search(ln)]


def events_of(line):
    return int(STATUS.search(line).group(1).replace(",", ""))


def in_terminal(t, demo):
    dat = t.path("tty.dat")
    t.start([t.memtop, "-p", str(demo.pid), "--record", dat], width=200)
    first = t.wait_for(lambda s: status_lines(s), "the status line")
    n0 = events_of(first[0])
    time.sleep(3.5)
    s = t.screen()
    lines = status_lines(s)
    check(len(lines) == 1, "after 3.5 s, %d status lines, expected one rewritten in place:\n%s"
          % (len(lines), frame(s)))
    check(events_of(lines[0]) > n0, "the status line was not rewritten (%d events, then %d):\n%s"
          % (n0, events_of(lines[0]), frame(s)))
    # Ctrl-C's SIGINT to memtop alone (in the pane it would reach the
    # wrapping shell too, which then records no exit status)
    pids = [pid for pid in t.procs_with_argv0(t.memtop) if open(
        "/proc/%d/cmdline" % pid, "rb").read().split(b"\0").count(dat.encode())]
    check(len(pids) == 1, "the recording memtop's pid: %s" % pids)
    os.kill(pids[0], signal.SIGINT)
    rc = t.wait_dead()
    # with the history: tmux was seen to scroll the pane's first line out
    s = t.tmux("capture-pane", "-p", "-S", "-50", "-t", t.session).stdout.decode()
    rows = s.splitlines()
    summary = [i for i, ln in enumerate(rows) if ln.startswith("recorded ")]
    status = [i for i, ln in enumerate(rows) if STATUS.search(ln)]
    check(rc == 0 and len(summary) == 1 and len(status) == 1 and summary[0] > status[0],
          "after SIGINT: exit %s, the summary not on a line of its own below the status:\n%s"
          % (rc, frame(s)))


def in_a_log(t, demo):
    dat = t.path("log.dat")
    p = subprocess.Popen([t.memtop, "-p", str(demo.pid), "--record", dat], env=t.env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(3.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    lines = [ln for ln in err.splitlines() if STATUS.search(ln)]
    check(p.returncode == 0 and len(lines) == 1 and "\r" not in err and
          out.startswith("recorded "),
          "stderr a pipe, 3.5 s: exit %s, %d status lines (expected 1), stdout %r, stderr:\n%s"
          % (p.returncode, len(lines), out, err))


def test(t):
    demo = t.start_preloaded_demo(120)
    in_terminal(t, demo)
    in_a_log(t, demo)


tuilib.main(test, __doc__)
