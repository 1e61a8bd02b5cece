"""check_record_killed.py -- a target killed while the viewer records it.

`memtop -p PID` of a preloaded memtop-demo, `r`, then SIGKILL of the demo.
Its recording status in the segment stays "on" for ever (nothing finalizes
it), and the header went on showing "● REC <path> <size>" under "GONE".
Asserts: the header says GONE without a final snapshot and, on the
recording's row, "recorded <path> (at least <size>, not finalized: the process
died)", no "REC"; the file opens with `memtop -f --batch`, which says it
was not finalized; q exits 0.
"""
import os
import re
import signal

import tuilib
from tuilib import check, frame, header_line


def test(t):
    demo = t.start_preloaded_demo(60)
    t.start([t.memtop, "-p", str(demo.pid)], width=200)
    shown, dat = t.record_key("r")
    t.wait_for(lambda s: os.path.getsize(dat) > 0, "the recording's first bytes")
    demo.send_signal(signal.SIGKILL)
    demo.wait()
    done = re.compile(r"recorded (\S+\.dat) \(at least ([\d.]+ ?(?:B|KiB|MiB)), not finalized: the process "
                      r"died\)")
    s = t.wait_for(lambda s: "GONE" in header_line(s, 0) and done.search(header_line(s, 3)) and s,
                   "GONE and 'recorded <path> (at least <size>, not finalized...)' in the header")
    check("REC " not in header_line(s, 3), "the header still says REC:\n" + frame(s))
    check(done.search(header_line(s, 3)).group(1) == shown,
          "the header names another file:\n" + frame(s))
    rc, out, err = t.run_memtop(["-f", dat, "--batch"])
    check(rc == 0 and "not finalized" in out, "memtop -f --batch of the killed recording: %d %s %s"
          % (rc, out[-300:], err.strip()))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after q" % rc)


tuilib.main(test, __doc__)
