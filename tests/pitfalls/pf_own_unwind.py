#!/usr/bin/env python3
"""Pitfall 8b: a program whose library defines unw_backtrace,
_Unwind_Backtrace and unw_step of its own.  Its calls must reach its own
code, libmemtop.so must not be bound to them ("foreign calls" stays 0, the
output equals the plain run's), and memtop's frames must be real ones."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, frame_module  # noqa: E402

t = Test("own_unwind")
snap = t.run_all([t.prog("pf_own_unwind")], 0)
if snap:
    m = t.check_marker(snap, 1609, "main's allocations", alloc=50, free=50)
    for tr in m["traces"]:
        frames = tr.get("frames") or []
        addrs = [f.get("address", "") for f in frames]
        t.check(not any(a.startswith("0x5eed000") for a in addrs),
                "memtop's backtrace came from the program's fake unw_backtrace: %s" % addrs)
        t.check(os.path.basename(frame_module(tr) or "?") == "pf_own_unwind",
                "frames[0] of main's allocation is not in the program: %s" % frames[:2])
t.finish()
