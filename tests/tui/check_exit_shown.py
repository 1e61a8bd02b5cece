"""check_exit_shown.py -- the target's exit is shown and memtop returns PROG's status.

`memtop -- memtop-demo 3`: asserts the header switches to "EXITED: live =
leaked at exit", and the final state stays on screen until q: the leaker's row
with its live bytes (what leaked), the cache's row at 0 B (released at
shutdown), through several seconds of memtop's refreshes.  After q memtop
exits with PROG's status (0).  Then
`memtop -- sh -c 'exit 3'`: EXITED, and after q, exit status 3.
"""
import time

import tuilib
from tuilib import check, frame


def exited_header(s):
    return s.startswith("memtop pid") and "EXITED" in s.split("\n")[0]


def final_state(rows, s):
    leak = tuilib.row_for(rows, "session_log_append")
    cache = tuilib.row_for(rows, "cache_fill")
    return (exited_header(s) and leak is not None and
            tuilib.parse_bytes(leak.cells["LIVE"]) > 0 and
            (cache is None or tuilib.parse_bytes(cache.cells["LIVE"]) == 0))


def test(t):
    t.start([t.memtop, "--", t.demo, "3"])
    t.wait_symbolized()
    rows, s = t.wait_rows(final_state, "EXITED in the header, the leaker's live bytes and the "
                          "cache at 0 B", timeout=20)
    check("EXITED: live = leaked at exit" in s.split("\n")[0],
          "the header does not explain EXITED:\n" + frame(s))
    # The final state stays while memtop keeps refreshing (it ticks every 100 ms
    # and refreshes the data every second): watch it for 3 s.
    t.wait_no_demo(timeout=10)
    until = time.monotonic() + 3.0
    while time.monotonic() < until:
        s = t.screen()
        _, rows = tuilib.parse_table(s)
        check(final_state(rows, s), "the final state left the screen after the exit:\n" +
              frame(s))
        check(t.exit_status() is None, "memtop ended by itself when PROG exited")
        time.sleep(0.2)
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after PROG exited 0, expected 0; screen:\n%s" %
          (rc, frame(t.screen())))

    t.start([t.memtop, "--", "sh", "-c", "exit 3"])
    t.wait_for(exited_header, "EXITED in the header for sh -c 'exit 3'")
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 3, "memtop exited %d after PROG exited 3, expected 3; screen:\n%s" %
          (rc, frame(t.screen())))


tuilib.main(test, __doc__)
