"""check_detail.py -- Enter opens the detail view of the selected row; Esc returns.

Narrows the table to the leaker (/session_log_append, Enter), then Enter.
Asserts the detail view shows the row's name, "Backtrace" with the frames
session_log_append and main (demo.c, as "inlined into main": run() is
inlined into it), the counters, and "Leak suspicion N /
100" with its parts (sustained growth, retention, aging); Esc returns to the
table with its heading and rows.  Early in the demo's life the "earlier:"
checkpoints name each moment once, never "0s ago".  At 80x24 the leak
score's parts and the "earlier:" line wrap instead of ending in "…".
"""
import re
import time

import tuilib
from tuilib import check, frame


def check_checkpoints(t):
    """Early in the demo's life its checkpoint windows share their oldest
    point: watched for 4 s, the "earlier:" line names each moment once and
    never "0s ago" (that is "now")."""
    until = time.monotonic() + 4.0
    seen = 0
    while time.monotonic() < until:
        s = t.screen()
        m = re.search(r"earlier:(.*)", s)
        check(m, "no 'earlier:' line in the detail view:\n" + frame(s))
        agos = re.findall(r"(\S+) ago", m.group(1))
        check(len(agos) == len(set(agos)) and "0s" not in agos,
              "the checkpoints repeat a moment or say '0s ago': %r" % m.group(0))
        seen += bool(agos)
        time.sleep(0.2)
    check(seen, "no checkpoint was shown in 4 s")


def check_narrow(t):
    """At 80x24 the leak score's four parts and the "earlier:" line, down
    to its "now", are all on screen (one page down for the latter): they
    wrap, none is cut with "…" ("retent…", "now 101…")."""
    t.resize(80, 24)
    t.wait_for(lambda s: t.size() == (80, 24), "the 80x24 window")
    time.sleep(0.5)  # memtop ticks every 100 ms
    s = t.screen()
    check(re.search(r"retention \(few frees, not scored\) \d+\.\d\d", s),
          "the leak score's retention is cut at 80 columns:\n" + frame(s))
    t.keys("PageDown")
    time.sleep(0.5)
    s = t.screen()
    m = re.search(r"earlier:((?:.|\n)*?) now (\S+ \S+)$", s, re.M)
    check(m and "\u2026" not in m.group(0),
          "the 'earlier:' line is cut at 80 columns:\n" + frame(s))
    t.keys("PageUp")
    t.resize(100, 60)


def test(t):
    t.start([t.memtop, "--", t.demo, "60"], width=100, height=60)
    t.wait_symbolized()
    t.keys("/")
    t.keys_literal("session_log_append")
    t.keys("Enter")
    t.wait_rows(lambda rows, s: len(rows) == 1 and "session_log_append" in rows[0].location,
                "the table narrowed to session_log_append")
    t.keys("Enter")
    s = t.wait_for(lambda s: "Backtrace" in s and "Leak suspicion" in s and
                   bool(re.search(r"\bmain\b", s)),
                   "the detail view (Backtrace, Leak suspicion, a main frame)")
    check(tuilib.find_heading(s.split("\n")) is None,
          "the table's heading is still shown in the detail view:\n" + frame(s))
    check(re.search(r"session_log_append.*demo\.c:\d+", s),
          "the backtrace has no session_log_append (demo.c:N) frame:\n" + frame(s))
    m = re.search(r"Leak suspicion (\d+) / 100", s)
    check(m, "no 'Leak suspicion N / 100':\n" + frame(s))
    for part in ("sustained growth", "retention", "aging"):
        check(part in s, "the leak score's part %r is not shown:\n%s" % (part, frame(s)))
    check("Counters" in s, "no Counters section:\n" + frame(s))
    # run() is inlined into main(): the line under run's frame names the
    # function it was inlined into (it said "inlined: main", as if main were)
    inl = re.compile(r"\n\s+inlined into main \(demo\.c:\d+\)")
    s = t.wait_for(lambda s: "resolving..." not in s and s, "the backtrace resolved")
    check(inl.search(s) and "inlined: " not in s,
          "no 'inlined into main (demo.c:N)' under an inlined frame:\n" + frame(s))
    check("the walk ended in" not in s, "a whole backtrace called cut:\n" + frame(s))
    check_checkpoints(t)
    check_narrow(t)
    t.keys("Escape")
    t.wait_rows(lambda rows, s: "Backtrace" not in s and
                tuilib.row_for(rows, "session_log_append"),
                "the table again after Esc")


tuilib.main(test, __doc__)
