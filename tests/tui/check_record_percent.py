"""check_record_percent.py -- `r` in a working directory whose name holds '%'.

The viewer names the recording in its working directory and the target
reads that name as a pattern (%p, %n, ...): a directory named "w%nq" must
reach it as "w%%nq", or the file goes to "w0q" (a missing directory: the
recording fails).  Asserts the file appears in w%nq, shown by the header,
and `r` again stops it; q exits 0.
"""
import os
import re
import shlex

import tuilib
from tuilib import check, frame, header_line


def test(t):
    d = t.path("w%nq")
    os.makedirs(d, exist_ok=True)
    demo = t.start_preloaded_demo(60)
    t.start("cd %s && %s -p %d" % (shlex.quote(d), shlex.quote(t.memtop), demo.pid))
    t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and "Rec off" in header_line(s, 3),
               "RUNNING and 'Rec off' in the header")
    t.keys("r")
    rec_re = re.compile(r"● REC (\S+\.dat) ")
    s = t.wait_for(lambda s: (rec_re.search(header_line(s, 3)) or "recording:" in s) and s,
                   "'● REC <path>' (or an error) after r")
    made = [f for f in os.listdir(d) if f.endswith(".dat")]
    check(rec_re.search(header_line(s, 3)) and len(made) == 1 and
          rec_re.search(header_line(s, 3)).group(1).endswith("w%nq/" + made[0]),
          "the recording is not in w%%nq: files %r, screen:\n%s" % (made, frame(s)))
    t.keys("r")
    t.wait_for(lambda s: "recorded " in header_line(s, 3), "'recorded <path>' after r again")
    t.keys("q")
    check(t.wait_dead() == 0, "memtop did not exit 0 after q")


tuilib.main(test, __doc__)
