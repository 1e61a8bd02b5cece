"""check_keys.py -- the remaining keys: the sort menu, pause, record, moving.

Asserts: `s` opens the "Sort by" menu listing the sort keys (by their -s
names: live, count, allocs, temporary, growth, leak); Down to
"leak suspicion" (the last entry) and Enter sorts by it ("sorted by leak");
F6 opens the menu again and Esc closes it without a change; Space shows
PAUSED in the header and the figures stop changing (the leaker's LIVE and the
uptime stay the same across two more seconds) until Space again shows RUNNING
and they move on; `r` says recording is not available, or
starts one (REC <file>.dat in the header; `r` again stops it, the file exists); End/Home/j/k keep the
table on screen (header, heading and rows stay).
"""
import os
import re
import time

import tuilib
from tuilib import check, frame

MENU = ["live", "count", "allocs", "temporary", "growth", "leak"]  # the -s names


def header(s):
    return s.split("\n")[0]


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()

    t.keys("s")
    s = t.wait_for("Sort by", "the sort menu after s")
    for entry in MENU:
        check(re.search(r"^\s+\*?\s*%s\s" % entry, s, re.M), "the sort menu does not offer %r:\n%s" % (entry, frame(s)))
    t.keys("Down", "Down", "Down", "Down", "Down", "Enter")
    t.wait_for(lambda s: "Sort by" not in s and "sorted by leak" in s,
               "the menu closed and 'sorted by leak' after choosing leak suspicion")
    t.keys("F6")
    t.wait_for("Sort by", "the sort menu after F6")
    t.keys("Escape")
    t.wait_rows(lambda rows, s: "Sort by" not in s and rows, "the table after Esc in the menu")

    t.keys("Space")
    s = t.wait_for(lambda s: "PAUSED" in header(s), "PAUSED in the header after Space")
    frozen = (re.search(r" up (\S+) ", s).group(1),
              tuilib.row_for(tuilib.parse_table(s)[1], "session_log").cells["LIVE"])
    until = time.monotonic() + 2.5  # several refresh intervals of 1 s
    while time.monotonic() < until:
        s = t.screen()
        now = (re.search(r" up (\S+) ", s).group(1),
               tuilib.row_for(tuilib.parse_table(s)[1], "session_log").cells["LIVE"])
        check(now == frozen and "PAUSED" in header(s),
              "the figures changed while paused (%s -> %s):\n%s" % (frozen, now, frame(s)))
        time.sleep(0.2)
    t.keys("Space")
    t.wait_for(lambda s: "RUNNING" in header(s) and re.search(r" up (\S+) ", s).group(1) !=
               frozen[0], "RUNNING and the uptime moving again after the second Space")

    t.keys("r")
    s = t.wait_for(lambda s: "not available" in s or "REC " in s,
                   "'not available' or a REC indicator after r")
    if "REC " in s:  # recording exists: r again stops it; the .dat file is there
        m = re.search(r"REC (\S+\.dat)", s)
        check(m, "REC without a .dat path:\n" + frame(s))
        t.keys("r")
        t.wait_for(lambda s: "REC " not in s, "REC to leave the header after the second r")
        check(os.path.isfile(os.path.join(t.workdir, m.group(1))),
              "the recording %s does not exist" % m.group(1))

    for key in ("End", "Home", "j", "k", "NPage", "PPage"):
        t.keys(key)
        t.wait_rows(lambda rows, s: header(s).startswith("memtop pid") and len(rows) >= 3,
                    "header, heading and the rows after %s" % key)


tuilib.main(test, __doc__)
