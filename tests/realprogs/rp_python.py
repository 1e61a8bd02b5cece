#!/usr/bin/env python3
"""Real program: python3 (the interpreter running this driver) executes an
allocation-heavy threaded script that spawns a child and exits 3; same
output and exit code under libmemtop.so, and tracked.  Run twice: with
Python's own small-object allocator (the default), and with
PYTHONMALLOC=malloc, which sends every object through the hooks.  With
pymalloc the target says once that the data is NOT exact (docs/allocators.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import Test, check_tracked, script  # noqa: E402

t = Test("python3")
cmd = [os.path.realpath(sys.executable), "-S", script("alloc_threads.py")]
snap = t.run_all(cmd, 3, timeout=120,
                 expect_msg=r"^memtop\[\d+\]: NOT exact: CPython's pymalloc in .* hides small")
check_tracked(t, snap, "python3", min_allocs=10000)
snap = t.run_all(cmd, 3, extra={"PYTHONMALLOC": "malloc"}, timeout=120)
check_tracked(t, snap, "python3 with PYTHONMALLOC=malloc", min_allocs=500000)
t.finish()
