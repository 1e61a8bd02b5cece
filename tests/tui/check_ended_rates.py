"""check_ended_rates.py -- an exited or killed target has no present rates.

A dead process allocates nothing: its last rates are not current, and it
publishes nothing.

Asserts, for `memtop -- memtop-demo 4` once it EXITED (a final snapshot)
and for `memtop -p PID` once the demo was killed with SIGKILL (GONE, no
final snapshot): the header reads "Rate none (process exited|died)", the
growth is labelled "until it exited|died" in the header and in the rows'
note, ALLOC/s reads "-"; `e` exports JSON with "publishing": false and
"not_publishing" "exited" | "gone without a final snapshot".  And
`memtop -- memtop-demo` whose demo is killed by SIGKILL says by what:
"GONE: killed by signal 9 (SIGKILL), no final snapshot".
"""
import os
import re
import signal

import tuilib
from tuilib import check, frame


def check_ended(t, word, why, taken):
    s = t.wait_for(lambda s: "Rate none (process %s)" % word in tuilib.header_line(s, 2) and s,
                   "'Rate none (process %s)' in the header" % word)
    check("until it %s" % word in tuilib.header_line(s, 2),
          "the header's growth is not labelled 'until it %s':\n%s" % (word, frame(s)))
    check(re.search(r"growth/s over the last .* until it %s" % word, s),
          "the rows' note does not say the growth is until it %s:\n%s" % (word, frame(s)))
    _, rows = tuilib.parse_table(s)
    leak = tuilib.row_for(rows, "session_log_append")
    check(leak is not None and leak.cells["ALLOC/s"] == "-",
          "ALLOC/s of a dead process is not '-':\n%s" % frame(s))
    _, snap = t.export_key(taken)
    check(snap["publishing"] is False and snap["not_publishing"] == why,
          "JSON of a %s process: publishing %r, not_publishing %r" %
          (word, snap["publishing"], snap["not_publishing"]))


def test(t):
    taken = set()
    t.start([t.memtop, "--", t.demo, "4"])
    t.wait_symbolized()
    t.wait_for(lambda s: "EXITED" in tuilib.header_line(s, 0), "EXITED in the header")
    check_ended(t, "exited", "exited", taken)
    t.keys("q")
    t.wait_dead()

    demo = t.start_preloaded_demo(300)
    t.start([t.memtop, "-p", demo.pid])
    t.wait_symbolized()
    t.wait_for(lambda s: "Rate " in s and "/s allocs" in tuilib.header_line(s, 2) and
               "growth/s over the last" in s, "the demo's present rates and a growth window")
    os.kill(demo.pid, signal.SIGKILL)
    demo.wait()
    t.wait_for(lambda s: "GONE" in tuilib.header_line(s, 0), "GONE in the header")
    check_ended(t, "died", "gone without a final snapshot", taken)
    t.keys("q")
    t.wait_dead()

    # PROG, memtop's child, killed: the header says by what (--batch did, the viewer only
    # "GONE without a final snapshot")
    t.start([t.memtop, "--", t.demo, "300"], width=200)
    t.wait_symbolized()
    pane = t.pane_pid()
    viewers = [p for p in [pane] + t.children_of(pane) if p in t.procs_with_argv0(t.memtop)]
    demos = t.procs_with_argv0(t.demo)
    kids = [k for v in viewers for k in t.children_of(v) if k in demos]
    check(len(kids) == 1, "one memtop-demo under this test's viewer: %s" % kids)
    os.kill(kids[0], signal.SIGKILL)
    t.wait_for(lambda s: "GONE: killed by signal 9 (SIGKILL)" in tuilib.header_line(s, 0),
               "'GONE: killed by signal 9 (SIGKILL)' in the header")


tuilib.main(test, __doc__)
