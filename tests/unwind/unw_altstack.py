#!/usr/bin/env python3
"""Allocations in a signal handler on a small alternate stack
(unw_altstack.c: 8 KiB and 16 KiB, a guard page below).  The walk through
the signal frame is libunwind's, which needs ~13 KB of stack: with too
little room left, memtop gives the block the trace without frames instead
of overflowing the stack.  In the auto and libunwind modes (and in check
mode at 16 KiB: check mode keeps two backtraces on the stack, a testing
mode needs more room) the program must run as it does without memtop
(same output, exit 0, no crash), and every handler block must be counted
exactly (allocated, freed, none live).  libmemtop.so must be linked -z now
(below)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test  # noqa: E402

N = 200
t = Test("unwind_altstack")
# A lazily bound function of libmemtop.so runs the loader's resolver on the
# handler's stack at its first call, and glibc's saves the whole register
# state there (about 3 KB with AVX-512, more with AMX): 8 KiB overflowed on
# such CPUs.  Other CPUs pass without the flag, so the flag is checked too.
if t.have_lib:
    dyn = subprocess.run(["readelf", "-d", t.lib], capture_output=True, text=True).stdout
    t.check("BIND_NOW" in dyn, "libmemtop.so is not linked -z now (lazy binding in hooks):\n"
            + dyn)
for size, modes in ((8192, ("auto", "libunwind")), (16384, ("auto", "libunwind", "check"))):
    for mode in modes:
        cmd = [t.prog("unw_altstack"), str(size), str(N)]
        snap = t.run_all(cmd, 0, extra={"MEMTOP_UNWIND": mode})
        if snap is not None:
            t.check_marker(snap, 4711, "%d-byte alternate stack, %s" % (size, mode),
                           alloc=N, free=N, live=0)
t.finish()
