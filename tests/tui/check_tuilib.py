"""check_tuilib.py -- tuilib's own helpers that decide what a test may kill.

Asserts: mentions_dir matches a test's work directory as an argument, a
path under it or an --opt=DIR value, and not a directory whose name only
starts with it (tui_export's cleanup killed tui_export_pprof, whose work
directory .../work/export_pprof starts with .../work/export).  No tmux.
"""
import sys

import tuilib

CASES = [
    (b"python3\0check_export.py\0--workdir\0/b/work/export\0", True),
    (b"memtop\0--\0/b/work/export/tmp/x\0", True),
    (b"env\0MEMTOP_SHM_DIR=/b/work/export\0prog\0", True),
    (b"python3\0check_export_pprof.py\0--workdir\0/b/work/export_pprof\0", False),
    (b"memtop\0/b/work/export_pprof/shm\0", False),
    (b"memtop\0/b/work/exports\0", False),
]

bad = [(c, want) for c, want in CASES if tuilib.mentions_dir(c, b"/b/work/export") != want]
for c, want in bad:
    print("FAIL check_tuilib: mentions_dir(%r, /b/work/export) should be %s" % (c, want))
if not bad:
    print("PASS check_tuilib")
sys.exit(1 if bad else 0)
