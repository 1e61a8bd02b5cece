#!/usr/bin/env python3
"""Pitfall 6: 101 dlopen/dlclose cycles of a module that allocates in its
constructor, its destructor and its functions; blocks it hands out are freed
after dlclose.  Exact counts, and the module's traces name the module."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, frame_module  # noqa: E402

CYCLES, WORK = 101, 10
t = Test("dlopen")
snap = t.run_all([t.prog("pf_dlopen")], 0)
if snap:
    m = t.check_marker(snap, 1531, "module loop", alloc=CYCLES * WORK, free=CYCLES * WORK)
    t.check_marker(snap, 1543, "block handed out, freed after dlclose", alloc=CYCLES,
                   free=CYCLES, live=0)
    t.check_marker(snap, 1553, "module constructor/destructor", alloc=CYCLES, free=CYCLES)
    mods = {os.path.basename(frame_module(tr) or "?") for tr in m["traces"]}
    t.check(mods == {"libmtp_dlmod.so"},
            "frames[0] of the module's traces lie in %s, expected libmtp_dlmod.so" % mods)
t.finish()
