"""check_help.py -- `?`, `h` and F1 show the help screen listing the keys.

Asserts the help lists every key the issue requires (arrows, PgUp/PgDn,
Home/End, Enter, s/F6, L, M, G, /, g, b, e, r, Space, q, ?/h) and the column
names; Esc closes it and the table is back; `h` and F1 open it too.  The
help of "Esc, Left" says Esc (only) clears the table's filter, and so it
is: Left leaves it, Esc clears it.  At 80x24 the first page says more
follows, End shows the last page, where no line of the help is cut (the
Header section's were, with "…"), and Home the first again.
"""
import re
import time

import tuilib
from tuilib import check, frame

KEYS = ["Up/Down", "j/k", "PgUp/PgDn", "Home/End", "Enter", "Esc", "s", "F6", "L", "M", "G",
        "/", "F3", "g", "F4", "b", "F2", "e", "F7", "r", "F8", "Space", "F5", "q", "F10",
        "?", "h", "F1"]


def listed_keys(s):
    """The keys named in the help's key column (text before the description)."""
    keys = set()
    for line in s.split("\n"):
        m = re.match(r"^\s+(\S.*?)\s{2,}\S", line)
        if m:
            keys.update(k.strip() for k in m.group(1).split(","))
    return keys


def test(t):
    t.start([t.memtop, "--", t.demo, "60"], width=100, height=60)
    t.wait_symbolized()
    for key in ("?", "h", "F1"):
        t.keys(key)
        s = t.wait_for("memtop keys", "the help screen after %s" % key)
        if key == "?":
            listed = listed_keys(s)
            for k in KEYS:
                check(k in listed, "the help does not list %r:\n%s" % (k, frame(s)))
            for col in tuilib.COLUMNS:
                check(col in s, "the help does not explain column %s" % col)
            # long lines wrap under their text rather than end in "…" (e's
            # and R's did at 120 columns, more at 100)
            check("\u2026" not in s and "FILE.tree.json" in s,
                  "a help line is cut:\n%s" % frame(s))
            esc = next((ln for ln in s.split("\n") if "Esc, Left" in ln), "")
            check("Esc clears the filter" in esc,
                  "the help of Esc, Left does not say only Esc clears the filter: %r" % esc)
        t.keys("Escape")
        t.wait_rows(lambda rows, s: "memtop keys" not in s and rows,
                    "the table again after Esc")
    check_left_keeps_filter(t)
    check_end_at_80(t)


def check_end_at_80(t):
    """The help's last page at 80x24: its Header lines wrap, none ends in "…"."""
    t.resize(80, 24)
    t.wait_for(lambda s: t.size() == (80, 24), "the 80x24 window")
    t.keys("?")
    s = t.wait_for("memtop keys", "the help screen at 80x24")
    # the first page says that more follows, and End (not a dozen PgDn)
    # reaches the last page, Home the first again
    check(re.search(r"-- \d+ more lines: Down, PgDn, End --", s),
          "the help's first page at 80x24 does not say more follows:\n%s" % frame(s))
    t.keys("End")
    s = t.wait_for("man memtop has the rest", "the end of the help after End at 80x24")
    time.sleep(0.3)  # memtop ticks every 100 ms
    s = t.screen()
    check("\u2026" not in s and "every figure" in s,
          "a help line is cut at 80 columns:\n%s" % frame(s))
    check("more lines" not in s, "the help's last page says more follows:\n%s" % frame(s))
    t.keys("Home")
    t.wait_for(lambda s: "memtop keys" in s and "man memtop has the rest" not in s,
               "the help's first page after Home")
    t.keys("Escape")


def check_left_keeps_filter(t):
    """As the help says: in the live table Left leaves the filter, Esc clears it."""
    t.keys("/")
    t.keys_literal("cache_fill")
    t.keys("Enter")
    t.wait_for(lambda s: 'filter "cache_fill"' in s, "the filter in the table's note")
    t.keys("Left")
    time.sleep(0.5)  # memtop ticks every 100 ms
    s = t.screen()
    check('filter "cache_fill"' in s, "Left cleared the filter:\n" + frame(s))
    t.keys("Escape")
    t.wait_for(lambda s: 'filter "' not in s, "the filter cleared by Esc")


tuilib.main(test, __doc__)
