"""check_picker_no_segment.py -- the picker shows a process that could not create its segment, with the reason.

A demo preloaded with MEMTOP_SHM_DIR a directory that does not exist (and
MEMTOP_START_MS=0: it fails at once) has no segment; its libmemtop.so keeps
why (docs/shm-protocol.md, "When there is no segment").  `memtop` with no
target, looking in that directory, must list the demo's pid with "cannot
create its segment ...: No such file or directory"; q exits 0 and leaves
the demo running.
"""
import os
import re
import subprocess

import tuilib
from tuilib import check


def test(t):
    missing = os.path.join(t.shm_dir, "missing")
    env = dict(t.env, LD_PRELOAD=os.path.abspath(t.args.preload), MEMTOP_SHM_DIR=missing,
               MEMTOP_START_MS="0")
    demo = subprocess.Popen([t.demo, "60"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t.children.append(demo)
    t.start([t.memtop], width=160, MEMTOP_SHM_DIR=missing)
    row = r"^\s*%d\s+running\s.*cannot create its segment: No such file or directory" % demo.pid
    t.wait_for(lambda s: re.search(row, s, re.M),
               "pid %d in the picker with the reason it has no segment" % demo.pid)
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after q, expected 0" % rc)
    check(demo.poll() is None, "the demo ended (status %s)" % demo.returncode)


tuilib.main(test, __doc__)
