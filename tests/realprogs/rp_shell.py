#!/usr/bin/env python3
"""Real program: sh -c runs pipelines of seq, sort, awk, tr, sed, uniq and cut
(every process preloaded) and exits 4; same output and exit code, no
segment left, and the shell tracked.  Then pipelines whose writers die of
SIGPIPE (yes | head): same output; segments of the killed writers may stay
(they are stale, for the viewer to clean) and are only listed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import Test, check_tracked, need, script  # noqa: E402
from mtplib import segments  # noqa: E402

(sh,) = need("sh")
t = Test("sh")
snap = t.run_all([sh, "-c", open(script("pipeline.sh")).read()], 4, timeout=120)
check_tracked(t, snap, "sh")
cmd = [sh, script("sigpipe.sh")]
plain = t.run_plain(cmd)
if t.expect(plain, 0) and t.have_lib:
    shm = t.shm_dir("shm-sigpipe")
    res = t.run_preloaded(cmd, shm)
    t.expect(res, 0, plain.out)
    t.log("segments left by processes killed by SIGPIPE: %s" % segments(shm))
t.finish()
