#!/usr/bin/env python3
"""dlclose flushes the own unwinder's rule cache: two libraries with the
same code layout but different stack frames (unw_swap_lib.c built with two
pad sizes) are loaded one after the other at the same address, 20 rounds,
each allocating 50 blocks from a fresh thread.  Under MEMTOP_UNWIND=check
the own walker must agree with libunwind on every allocation and never
need to fall back: with a stale rule from the other library, its walk
reads the wrong stack slots and either disagrees or gives up.  The test
also verifies its own premise: both libraries have identical symbol
offsets, and at least one round put the second where the first had been.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test, check_agree, env_path, run_check  # noqa: E402

t = Test("unwind_dlclose_reuse")
a, b = env_path("UNW_SWAP_A"), env_path("UNW_SWAP_B")


def symbols(lib):
    p = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


sa, sb = symbols(a), symbols(b)
if sa is not None and sb is not None:
    t.check(sa == sb and "swap_alloc" in sa,
            "premise: the two libraries' symbols differ (layouts differ):\n%s\n%s" % (sa, sb))
s = run_check(t, [t.prog("unw_dlswap"), a, b], "dlswap", compare_out=False)
check_agree(t, s, "dlswap", min_own=2 * 20 * 50, fallback_ok=False)
if s is not None:
    res = t.run_plain([t.prog("unw_dlswap"), a, b])
    m = re.search(r"same_address (\d+)", res.out)
    t.check(m is not None and int(m.group(1)) > 0,
            "premise: the second library never loaded where the first had been: %r" % res.out)
t.finish()
