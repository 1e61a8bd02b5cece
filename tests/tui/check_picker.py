"""check_picker.py -- `memtop` with no target lists attachable processes.

With a preloaded demo running (its own MEMTOP_SHM_DIR, so it is the only
one), asserts: the picker lists the demo's pid and command; Enter attaches to
it: the header names the pid and the demo's rows appear; q then exits 0 and
leaves the demo running.  Before that, with none to list, at 80x24: the
title and the hint how to start one are whole (they ended in "…").
"""
import re

import tuilib
from tuilib import check


def check_empty_at_80(t):
    """No process yet, 80x24: the title and the hint fit, none cut with "…"."""
    t.start([t.memtop], width=80, height=24)
    s = t.wait_for("none yet in", "the picker's hint with no process")
    check("\u2026" not in s and "LD_PRELOAD=libmemtop.so PROG" in s and
          "LD_PRELOAD=libmemtop.so)" in s,
          "the picker's title or hint is cut at 80 columns:\n" + tuilib.frame(s))
    t.keys("q")
    check(t.wait_dead() == 0, "memtop did not exit 0 after q in the empty picker")


def test(t):
    check_empty_at_80(t)
    demo = t.start_preloaded_demo(60)
    t.start([t.memtop])
    t.wait_for(lambda s: re.search(r"^\s*%d\s.*memtop-demo 60\b" % demo.pid, s, re.M),
               "the demo's pid %d in the picker" % demo.pid)
    t.keys("Enter")
    rows, s = t.wait_symbolized()
    check(re.match(r"memtop pid %d\b" % demo.pid, s),
          "Enter did not attach to pid %d:\n%s" % (demo.pid, tuilib.frame(s)))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after q, expected 0" % rc)
    check(demo.poll() is None, "quitting memtop ended the target (status %s)" % demo.returncode)


tuilib.main(test, __doc__)
