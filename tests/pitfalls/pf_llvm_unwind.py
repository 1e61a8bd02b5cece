#!/usr/bin/env python3
"""Pitfall 8a: a program linked against LLVM's libunwind runs unchanged under
the preload (whose libunwind also exports _Unwind_*): same output, including
which library each unwinder entry point binds to, and its allocations are
tracked with frames in the program."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import SKIP, Test, frame_module  # noqa: E402

t = Test("llvm_unwind")
prog = t.prog("pf_llvm_unwind")
if not os.path.exists(prog):
    print("SKIP: LLVM's libunwind (Debian package libunwind-14) is not installed")
    sys.exit(SKIP)
plain = t.run_plain([prog])
t.check("_Unwind_Backtrace from libunwind.so.1" in plain.out,
        "the plain run does not use LLVM's unwinder:\n" + plain.out)
snap = t.run_all([prog], 0)
if snap:
    m = t.check_marker(snap, 1607, "malloc inside the _Unwind_Backtrace callback")
    t.check(m["alloc_count"] > 0, "no allocation from inside the unwinder callback tracked")
    mods = {os.path.basename(frame_module(tr) or "?") for tr in m["traces"]}
    t.check(mods == {"pf_llvm_unwind"}, "frames[0] of the callback's traces lie in %s" % mods)
t.finish()
