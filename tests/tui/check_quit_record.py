"""check_quit_record.py -- quitting the viewer finalizes PROG's --record file.

`memtop --record FILE -- memtop-demo 600`, ended with q and then (a second
run) with SIGINT to memtop (what Ctrl-C sends it: PROG runs in a process
group of its own) while PROG still runs.  libmemtop.so installs no signal
handler in its target, so the SIGTERM memtop ends PROG with used to leave
FILE "not finalized" without its last events; memtop now stops the
recording through the control channel first.  Asserts: memtop exits 0
(q) or 130 (Ctrl-C); `memtop -f FILE --batch` opens FILE and says it was
stopped, never "not finalized".
"""
import os
import re
import signal

import tuilib
from tuilib import check, header_line

REC = re.compile(r"● REC (\S+\.dat) ([\d.]+ ?(?:B|KiB|MiB))")


def memtop_recording(t, dat):
    """The pid of the memtop that records into dat."""
    for pid in t.procs_with_argv0(t.memtop):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if dat.encode() in f.read().split(b"\0"):
                return pid
    check(False, "no memtop recording into %s" % dat)


def quit_recording(t, key, name, want_rc):
    dat = t.path(name)
    t.start([t.memtop, "--record", dat, "--", t.demo, "600"], width=200)
    t.wait_for(lambda s: "RUNNING" in header_line(s, 0) and REC.search(header_line(s, 3)),
               "RUNNING and '● REC <path> <size>' in the header")
    if key == "SIGINT":
        os.kill(memtop_recording(t, dat), signal.SIGINT)
    else:
        t.keys(key)
    rc = t.wait_dead()
    check(rc == want_rc, "memtop exited %d after %s, expected %d" % (rc, key, want_rc))
    rc, out, err = t.run_memtop(["-f", dat, "--batch"])
    check(rc == 0 and "not finalized" not in out + err and re.search(r"^duration: .*stopped$",
                                                                      out, re.M),
          "after %s, memtop -f %s --batch: exit %d, not a finalized, stopped recording:\n%s%s"
          % (key, name, rc, out[:400], err.strip()))


def test(t):
    quit_recording(t, "q", "q.dat", 0)
    quit_recording(t, "SIGINT", "int.dat", 130)


tuilib.main(test, __doc__)
