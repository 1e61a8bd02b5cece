#!/usr/bin/env python3
"""dlclose flushes the own unwinder's rule cache: two libraries with the
same code layout but different stack frames (unw_swap_lib.c built with two
pad sizes) are loaded one after the other at the same address, 20 rounds,
each allocating 50 blocks from a fresh thread and 50 from the main thread.
Under MEMTOP_UNWIND=check the own walker must agree with libunwind on
every allocation and never need to fall back: with a stale rule from the
other library, its walk reads the wrong stack slots and either disagrees
or gives up.  With MEMTOP_UNWIND=libunwind, the main thread's blocks of
each library must have their own traces, with the right frames (three in
the library, then its caller): the main thread keeps walking
across the dlcloses, and a stale unw_backtrace frame cache would stop its
walks in the swapped library.  The test also verifies its own premise:
both libraries have identical symbol offsets, and at least one round put
the second where the first had been.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test, check_agree, env_path, run_check  # noqa: E402
from mtplib import frame_module, marker  # noqa: E402

t = Test("unwind_dlclose_reuse")


def right_frames(trace):
    """inner, middle, swap_alloc in a swap library, then use() in unw_dlswap."""
    mods = [frame_module(trace, i) or "" for i in range(4)]
    return (all("libunw_swap_" in m for m in mods[:3])
            and os.path.basename(mods[3]) == "unw_dlswap")
a, b = env_path("UNW_SWAP_A"), env_path("UNW_SWAP_B")


def symbols(lib):
    p = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


sa, sb = symbols(a), symbols(b)
if sa is not None and sb is not None:
    t.check(sa == sb and "swap_alloc" in sa,
            "premise: the two libraries' symbols differ (layouts differ):\n%s\n%s" % (sa, sb))
s = run_check(t, [t.prog("unw_dlswap"), a, b], "dlswap", compare_out=False)
check_agree(t, s, "dlswap", min_own=2 * 20 * 2 * 50, fallback_ok=False)
if s is not None:
    res = t.run_plain([t.prog("unw_dlswap"), a, b])
    m = re.search(r"same_address (\d+)", res.out)
    t.check(m is not None and int(m.group(1)) > 0,
            "premise: the second library never loaded where the first had been: %r" % res.out)
    res, snap = t.run_snapshot([t.prog("unw_dlswap"), a, b], t.shm_dir("shm-libunwind"),
                               {"MEMTOP_UNWIND": "libunwind"})
    t.expect(res, 0)
    snap = t.check_snapshot(snap, res.label)
    # The main thread calls each library from its own call site in main.
    # The fresh threads' traces (use, then libc's start_thread) are the same
    # for A and B when B loads where A was, and mix both sizes; in a round
    # where it does not, a fresh thread's trace holds one size only, so they
    # are told apart by their fifth frame (round_trip in unw_dlswap for the
    # main thread), not by their sizes alone.
    for size in ((2001, 2003) if snap is not None else ()):
        mk = marker(snap, size)
        main_tr = [tr for tr in mk["traces"]
                   if os.path.basename(frame_module(tr, 4) or "") == "unw_dlswap"]
        for key in ("alloc_count", "free_count"):
            got = sum(tr.get(key, 0) for tr in main_tr)
            t.check(got == 20 * 50, "main thread's swap blocks (%d-byte blocks): %s = %d, "
                    "expected %d" % (size, key, got, 20 * 50))
        bad = [[frame_module(tr, i) for i in range(4)] for tr in main_tr if not right_frames(tr)]
        t.check(main_tr and not bad,
                "libunwind mode, size %d: traces with wrong frames (modules %s)" % (size, bad))
t.finish()
