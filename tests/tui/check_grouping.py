"""check_grouping.py -- `g` cycles the grouping: trace, function, file, module.

Asserts, after each `g`: the status line says "one row per <group>" and the
location heading is FUNCTION, FILE, MODULE in turn; by function, the two
handle_request traces are one row that says "(2 traces)"; by file, demo.c is a
row; by module, memtop-demo is a row; a fourth `g` returns to one row per
trace (LOCATION heading, handle_request on two rows).
"""
import tuilib
from tuilib import check


def heading_ends(word):
    def ok(rows, s):
        heading, _ = tuilib.parse_table(s)
        return heading is not None and heading.rstrip().endswith(" " + word) and rows
    return ok


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    t.keys("g")
    t.wait_for("one row per function", "the status line after the first g")
    rows, s = t.wait_rows(heading_ends("FUNCTION"), "the FUNCTION heading")
    handle = [r for r in rows if "handle_request" in r.location]
    check(len(handle) == 1 and "(2 traces)" in handle[0].location,
          "by function, handle_request should be one row of 2 traces:\n" + tuilib.frame(s))
    check(tuilib.row_for(rows, "session_log_append"), "by function: no session_log_append row")
    t.keys("g")
    t.wait_for("one row per file", "the status line after the second g")
    t.wait_rows(lambda rows, s: heading_ends("FILE")(rows, s) and tuilib.row_for(rows, "demo.c"),
                "the FILE heading and a demo.c row")
    t.keys("g")
    t.wait_for("one row per module", "the status line after the third g")
    t.wait_rows(lambda rows, s: heading_ends("MODULE")(rows, s) and
                tuilib.row_for(rows, "memtop-demo"),
                "the MODULE heading and a memtop-demo row")
    t.keys("g")
    t.wait_rows(lambda rows, s: "LOCATION" in (tuilib.parse_table(s)[0] or "") and
                len([r for r in rows if "handle_request" in r.location]) == 2,
                "one row per trace again (LOCATION heading, two handle_request rows)")


tuilib.main(test, __doc__)
