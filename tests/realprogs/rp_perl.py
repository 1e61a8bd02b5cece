#!/usr/bin/env python3
"""Real program: perl builds and sorts big hashes of strings; same output
and exit code under libmemtop.so, and tracked."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import Test, check_tracked, need, script  # noqa: E402

(perl,) = need("perl")
t = Test("perl")
snap = t.run_all([perl, script("hashes.pl")], 0, timeout=120)
check_tracked(t, snap, "perl", min_allocs=10000)
t.finish()
