#!/usr/bin/env python3
"""Blocks of memtop's bootstrap arena (the allocations made while it looks
up the real allocator) used by the program after resolution
(progs/pf_boot_arena.c): free, realloc and malloc_usable_size of such
blocks, exact and sampled.  The program opens the window itself with the
offsets of two symbols of libmemtop.so (nm); without them (a stripped
library) the test is skipped.  Exact counts: the realloc'ed blocks (5003 and
5011 bytes) allocated once and freed once; the arena's blocks counted
nowhere (no unknown free, nothing negative: the snapshot's checks)."""
import re
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import SKIP, Test  # noqa: E402

t = Test("boot_arena")
offsets = {}
if t.have_lib:
    nm = subprocess.run(["nm", t.lib], capture_output=True, text=True).stdout
    for sym, var in (("mt_resolve_state", "PF_RESOLVE_STATE_OFF"),
                     ("mt_boot_arena", "PF_BOOT_ARENA_OFF")):
        m = re.search(r"^([0-9a-f]+) [bBdD] %s$" % sym, nm, re.M)
        if m:
            offsets[var] = m.group(1)
    if len(offsets) != 2:
        print("SKIP: libmemtop.so has no symbols mt_resolve_state and mt_boot_arena (stripped?)")
        sys.exit(SKIP)
cmd = [t.prog("pf_boot_arena")]
snap = t.run_all(cmd, 0, extra=offsets)
if snap:
    t.check_marker(snap, 5003, "the malloc'ed arena block realloc'ed", alloc=1, free=1, live=0)
    t.check_marker(snap, 5011, "the calloc'ed arena block realloc'ed", alloc=1, free=1, live=0)
if t.have_lib:
    # Sampled: free's fast path must not take an arena block for a real,
    # unsampled one (the sample filter pins the arena's blocks; the aligned
    # functions' blocks are in the arena for certain).  A sampled
    # snapshot's traces do not add up to its totals: exit, output and
    # silence are checked.
    plain = t.run_plain(cmd)
    pre = t.run_preloaded(cmd, t.shm_dir("shm-sampled"), dict(offsets, MEMTOP_SAMPLE="4k"))
    t.expect(pre, 0, plain.out)
    t.check_quiet(pre)
t.finish()
