"""check_attach.py -- `memtop -p PID` on a demo started with LD_PRELOAD by hand.

Asserts: the header names the pid and says RUNNING, with no "Output" field
(memtop did not start the program); the demo's rows appear symbolized; after
q memtop exits 0 and the demo is untouched (still running).
"""
import re

import tuilib
from tuilib import check, frame


def test(t):
    demo = t.start_preloaded_demo(60)
    t.start([t.memtop, "-p", demo.pid])
    rows, s = t.wait_symbolized()
    head = s.split("\n")[0]
    check(re.match(r"memtop pid %d\b" % demo.pid, head) and "RUNNING" in head,
          "the header does not show pid %d RUNNING:\n%s" % (demo.pid, frame(s)))
    check("Output " not in s, "an attached process has an Output field:\n" + frame(s))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop -p exited %d after q, expected 0" % rc)
    check(demo.poll() is None, "quitting memtop -p ended the target (status %s)" % demo.returncode)


tuilib.main(test, __doc__)
