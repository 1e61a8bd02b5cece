"""check_cut_stack.py -- a backtrace cut before the stack's start says so.

memtop-cut-stack is built without unwind tables or frame pointers: every
walk stops in lvl3, the function that calls malloc, and its trace has one
frame and no "truncated" flag (that is MEMTOP_DEPTH's).  Asserts the detail
view of lvl3's row says the walk ended in lvl3, not at the program's or a
thread's start (before: a one-frame backtrace shown as if whole);
check_detail.py asserts the demo's whole backtraces carry no such line.
"""
import re

import tuilib
from tuilib import check, frame


def test(t):
    check(t.args.cut_stack, "--cut-stack is required")
    t.start([t.memtop, "--", t.args.cut_stack, "60"], width=140, height=50)
    t.wait_rows(lambda rows, s: tuilib.row_for(rows, "lvl3") is not None, "lvl3's row")
    t.keys("/")
    t.keys_literal("lvl3")
    t.keys("Enter")
    t.wait_rows(lambda rows, s: len(rows) == 1 and "lvl3" in rows[0].location,
                "the table narrowed to lvl3")
    t.keys("Enter")
    s = t.wait_for(lambda s: "Backtrace" in s and "resolving..." not in s and s,
                   "the detail view with its backtrace resolved")
    check(re.search(r"\(1 frame\)", s), "lvl3's backtrace is not one frame:\n" + frame(s))
    check("the walk ended in lvl3, not at the program's or a thread's start" in s,
          "the cut backtrace is not said to be cut:\n" + frame(s))
    t.keys("q")
    check(t.wait_dead() == 0, "memtop did not exit 0 after q")


tuilib.main(test, __doc__)
