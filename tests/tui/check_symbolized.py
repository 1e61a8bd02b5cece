"""check_symbolized.py -- `memtop -- memtop-demo`: the rows appear symbolized.

Asserts: the header names the demo, says RUNNING and shows where PROG's output
goes; the table gets one row each for session_log_append, cache_fill and
handle_request, each with demo.c:LINE; no row stays an unresolved address.
"""
import re

import tuilib
from tuilib import check


def test(t):
    t.start([t.memtop, "--", t.demo, "60"], width=200)  # room for the whole command
    rows, s = t.wait_symbolized()
    lines = s.split("\n")
    check(lines[0].startswith("memtop pid "), "row 0 is not the header:\n" + tuilib.frame(s))
    check("RUNNING" in lines[0], "the header does not say RUNNING:\n" + tuilib.frame(s))
    check(t.demo in lines[0], "the header does not name the demo:\n" + tuilib.frame(s))
    check(re.search(r"Output \S*memtop-\d+\.out", s), "no 'Output <path>' in the header:\n" +
          tuilib.frame(s))
    for fn in ("session_log_append", "cache_fill", "handle_request"):
        r = tuilib.row_for(rows, fn)
        check(re.search(re.escape(fn) + r" \(demo\.c:\d+\)", r.location),
              "row of %s has no demo.c:LINE: %r" % (fn, r.text))
    # Names, not addresses, once resolved: wait for every row to be named.
    t.wait_rows(lambda rows, s: rows and not any(re.search(r"\+0x[0-9a-f]+", r.location)
                                                for r in rows),
                "every row to be symbolized (no module+0x offsets)")


tuilib.main(test, __doc__)
