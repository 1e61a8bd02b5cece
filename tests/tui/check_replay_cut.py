"""check_replay_cut.py -- a recording cut under the viewer: what is shown is what is said.

Why it exists: `memtop -f FILE`, then FILE cut (truncate) by another
process, then a seek: the header said "REPLAY 0.0s of ..." (the replay went
back to its start) while the heap line and the table still showed the end
state, and the status line said only "read: file shrank", naming no file.

Asserts, on a recording of memtop-demo (MEMTOP_RECORD) opened at its end:
after `truncate -s 1000 FILE`, `<` (the start, no read) then `}` (a read
that fails): the status line names FILE ("cannot read FILE: ...; shown at
its start"), the header's cursor is 0.0 s, and the heap line is no longer
the end state's; q exits 0.  Before, its detail view says no per-row rate
("- allocations/s", not "0.0") and no "since memtop attached".
"""
import os
import subprocess

import tuilib
from tuilib import check, frame, header_line

SECONDS = 2


def test(t):
    env = dict(t.env, LD_PRELOAD=os.path.abspath(t.args.preload),
               MEMTOP_RECORD=t.path("cut.dat"))
    p = subprocess.run([t.demo, str(SECONDS)], env=env, cwd=t.workdir, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=SECONDS + 60)
    check(p.returncode == 0, "the recorded demo exited %d: %s" % (p.returncode, p.stderr))
    dat = t.path("cut.dat")
    t.start([t.memtop, "-f", dat], width=200)
    s = t.wait_for(lambda s: "REPLAY" in header_line(s, 0) and ": end" in header_line(s, 0) and s,
                   "the replay at its end")
    end_heap = header_line(s, 1)
    # the detail view of a replay: no per-row rate without two snapshots ("-", as the
    # table's ALLOC/s; it said "0.0 allocations/s"), no "since memtop attached"
    t.keys("Enter")
    d = t.wait_for(lambda s: "Backtrace" in s and s, "the detail view")
    check(" - allocations/s" in d and "since memtop attached" not in d and
          "Live bytes at the cursor's last positions" in d,
          "the replay's detail view:\n%s" % frame(d))
    t.keys("Escape")
    with open(dat, "r+b") as f:
        f.truncate(1000)
    t.keys("<")
    t.wait_for(lambda s: "REPLAY 0.0s" in header_line(s, 0), "the cursor at the start")
    t.keys("}")
    s = t.wait_for(lambda s: "cannot read %s" % dat in s and s, "the status line naming the file")
    check("REPLAY 0.0s" in header_line(s, 0) and header_line(s, 1) != end_heap,
          "after the failed read the header says one moment and shows another (end: %r):\n%s"
          % (end_heap, frame(s)))
    t.keys("q")
    check(t.wait_dead() == 0, "memtop exited non-zero after q")


tuilib.main(test, __doc__)
