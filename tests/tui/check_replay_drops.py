"""check_replay_drops.py -- a recording's dropped events, with their causes,
in the viewer (`memtop -f FILE.dat` in tmux), --batch and the JSON export.

dat_lost_file (tests/recording) writes two small hand-built recordings, the
same every time:
  - new.dat: LOST records of every cause (dat_format.h MT_DAT_LOST_*):
    disk behind 3, writer stalled 2, hook could not wait 1, no buffer 1,
    initial-state capture 4, missed at the end 1, and one of an older writer
    without causes (2): 14 events.  The header's file line says
    "inexact: 14 events dropped: disk behind 3, writer stalled (wait cap) 2,
    ..." with every cause; --batch says the same on its warning line, the
    JSON export's recording.dropped_by_cause has each count (summing to
    events_dropped);
  - old.dat: a version-2 file whose LOST record has no causes (as every
    file before them): it opens as before, "2 events dropped: cause not
    recorded 2", and the JSON's not_recorded is 2.
"""
import json
import os
import subprocess

import tuilib
from tuilib import check, frame, header_line

NEW_LINE = ("inexact: 14 events dropped: disk behind 3, writer stalled (wait cap) 2, hook could "
            "not wait 1, no buffer memory 1, initial-state capture 4, missed at the end 1, cause "
            "not recorded 2")
NEW_BY_CAUSE = {"disk_behind": 3, "writer_starved": 2, "could_not_wait": 1, "no_buffer": 1,
                "initial_capture": 4, "missed_at_end": 1, "other": 0, "not_recorded": 2}
OLD_LINE = "inexact: 2 events dropped: cause not recorded 2"


def make(t, kind):
    out = t.path(kind + ".dat")
    p = subprocess.run([t.args.lost_file, kind, out], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "dat_lost_file %s: %s" % (kind, p.stderr.strip()))
    return out


def viewer(t, path, line):
    t.start([t.memtop, "-f", os.path.basename(path)], width=250)  # short: room for the line
    s = t.wait_for(lambda s: line in header_line(s, 3) and s,
                   "the header's file line to say %r" % line)
    check(line in header_line(s, 3), "header:\n" + frame(s))
    t.keys("q")
    t.wait_dead()
    check(t.exit_status() == 0, "memtop -f %s: q exits 0" % path)


def batch_and_json(t, path, line, by_cause):
    rc, out, err = t.run_memtop(["-f", path, "--batch"])
    check(rc == 0, "memtop -f %s --batch exited %d: %s" % (path, rc, err.strip()))
    words = line[len("inexact: "):]
    check("warning: recording inexact: " + words in out,
          "--batch gives the drops by cause (%r):\n%s" % (words, out[-800:]))
    rc, out, err = t.run_memtop(["-f", path, "--export", t.path("x.json")])
    check(rc == 0, "memtop -f %s --export exited %d: %s" % (path, rc, err.strip()))
    check(words in err, "memtop -f --export says the causes on stderr: %r" % err)
    rec = json.load(open(t.path("x.json")))["recording"]
    check(rec["dropped_by_cause"] == by_cause,
          "the JSON's dropped_by_cause: %s, expected %s" % (rec["dropped_by_cause"], by_cause))
    check(sum(rec["dropped_by_cause"].values()) == rec["events_dropped"],
          "dropped_by_cause sums to events_dropped (%d)" % rec["events_dropped"])


def test(t):
    new = make(t, "new")
    viewer(t, new, NEW_LINE)
    batch_and_json(t, new, NEW_LINE, NEW_BY_CAUSE)
    old = make(t, "old")
    viewer(t, old, OLD_LINE)
    batch_and_json(t, old, OLD_LINE, dict({k: 0 for k in NEW_BY_CAUSE}, not_recorded=2))


tuilib.main(test, __doc__)
