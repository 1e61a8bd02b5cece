"""check_dumb_term.py -- a terminal that cannot move the cursor is refused.

TERM=dumb has no "cup": ncurses drew only the F-key line and memtop sat
there, a blank viewer.  Like an unknown TERM, it is refused before the
screen is taken.

Asserts: in a tmux pane, `memtop -p PID` of a preloaded demo with
TERM=dumb exits 1 with one line saying the terminal cannot move the cursor
and suggesting --batch, never switching to the alternate screen; the same
with TERM=nosuchterm (one line, exit 1).
"""
import time

import tuilib
from tuilib import check, frame


def refused(t, pid, term, want):
    t.start(["env", "TERM=" + term, t.memtop, "-p", pid], width=200)
    deadline = time.monotonic() + tuilib.WAIT_S
    while t.exit_status() is None:
        check(not t.alternate_on(), "TERM=%s: memtop switched to the alternate screen" % term)
        check(time.monotonic() < deadline, "TERM=%s: memtop is still running:\n%s" %
              (term, frame(t.screen())))
        time.sleep(0.05)
    rc = t.exit_status()
    # the history too: tmux may scroll the pane when it dies
    text = t.tmux("capture-pane", "-p", "-J", "-S", "-100", "-t", t.session).stdout.decode()
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.startswith("Pane is dead")]
    check(rc == 1 and len(lines) == 1 and want in lines[0] and "--batch" in lines[0],
          "TERM=%s: exit %r, expected 1 and one line with %r and --batch:\n%s" %
          (term, rc, want, text))
    print("TERM=%s: %s" % (term, lines[0]))


def test(t):
    demo = t.start_preloaded_demo(60)
    refused(t, demo.pid, "dumb", "cannot move the cursor")
    refused(t, demo.pid, "nosuchterm", "unknown terminal type")


tuilib.main(test, __doc__)
