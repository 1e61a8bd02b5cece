"""check_resize.py -- the screen works at 80x24 and follows resizes.

Starts memtop at 100x30, then resizes the tmux window to 80x24, to 30x8 (below
the minimum, where memtop says what it needs), to 120x40 and back to 80x24.
At each usable size asserts: row 0 is the header ("memtop pid ... RUNNING"),
the table's heading row is present exactly once, the last row is the function
bar (F1Help ... F10Quit), the leaker's row is there, and no line is wider than
the window.
"""
import tuilib
from tuilib import check, frame


def assert_renders(t, width, height):
    def ok(s):
        lines = s.split("\n")
        if len(lines) < height:
            return False
        lines = lines[:height]
        heading, rows = tuilib.parse_table(s)
        return (lines[0].startswith("memtop pid ") and "RUNNING" in lines[0] and
                heading is not None and tuilib.row_for(rows, "session_log") is not None and
                "F1" in lines[-1] and "Quit" in lines[-1])
    s = t.wait_for(ok, "a full screen at %dx%d (header, heading, the leaker's row, function "
                   "bar on the last row)" % (width, height))
    check(t.size() == (width, height), "the pane is %s, expected %dx%d" % (t.size(), width,
                                                                           height))
    lines = s.split("\n")[:height]
    headings = [ln for ln in lines if tuilib.find_heading([ln]) is not None]
    check(len(headings) == 1, "%d heading rows at %dx%d:\n%s" % (len(headings), width, height,
                                                                 frame(s)))
    # the bar's last key whole from 80 columns on ("F10Quit…" before)
    check(width < 80 or (lines[-1].rstrip().endswith("F10Quit") and "\u2026" not in lines[-1]),
          "the function bar at %dx%d: %r" % (width, height, lines[-1]))
    for i, ln in enumerate(lines):
        check(tuilib.display_width(ln) <= width,
              "line %d is %d columns wide at %dx%d:\n%s" %
              (i, tuilib.display_width(ln), width, height, frame(s)))


def test(t):
    t.start([t.memtop, "--", t.demo, "60"], width=100, height=30)
    t.wait_symbolized()
    assert_renders(t, 100, 30)
    t.resize(80, 24)
    assert_renders(t, 80, 24)
    t.resize(30, 8)
    t.wait_for("memtop needs", "the too-small message at 30x8")
    t.resize(120, 40)
    assert_renders(t, 120, 40)
    t.resize(80, 24)
    assert_renders(t, 80, 24)
    # Still alive and responsive after all that: a key still works.
    t.keys("Space")
    t.wait_for(lambda s: s.startswith("memtop pid") and "PAUSED" in s.split("\n")[0],
               "PAUSED in the header after Space at 80x24")
    t.keys("Space")
    assert_renders(t, 80, 24)


tuilib.main(test, __doc__)
