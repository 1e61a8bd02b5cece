"""check_replay_cursor_back.py -- `memtop -f FILE.dat`: stepping back then
forward returns the cursor to the end.

memtop-demo runs 2 s with MEMTOP_RECORD (finalized at its exit); `memtop -f`
in tmux opens at the end ("REPLAY <t> of <d>: end, live = leaked").  Each of
`[` then `]` (1 % of the run) and `{` then `}` (10 %) must bring it back to
": end, live = leaked": the cursor's steps are whole nanoseconds, and a step
that lands within half a nanosecond of the end is the end (no event lies
between).  Before the fix the truncated step left the cursor 1 ns short:
the header read "REPLAY 2.0s of 2.0s" without ": end", the run's final state
not shown.  q exits 0.
"""
import tuilib
from tuilib import check, header_line

END = ": end, live = leaked"


def test(t):
    name = t.record_demo(2)
    t.start([t.memtop, "-f", name], width=140, height=30)
    t.wait_for(END, "the viewer opened at the end")
    for back, forth in (("[", "]"), ("{", "}"), ("[", "]")):
        t.keys(back)
        s = t.wait_gone(END)
        check("REPLAY" in header_line(s, 0), "no REPLAY header after %s:\n%s" % (back, s))
        t.keys(forth)
        s = t.wait_for(lambda s: END in header_line(s, 0) or None,
                       "%s then %s to return to the end" % (back, forth), timeout=5)
    t.keys("q")
    st = t.wait_dead()
    check(st == 0, "q: memtop exited %s" % st)


if __name__ == "__main__":
    tuilib.main(test, __doc__)
