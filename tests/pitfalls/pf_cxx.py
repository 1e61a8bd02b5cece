#!/usr/bin/env python3
"""Pitfall 9: a C++ program (new/delete, containers, exceptions on several
threads, bad_alloc, forced unwinding) gives the same output and exit code
under the preload, and its allocations are tracked."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("cxx")
snap = t.run_all([t.prog("pf_cxx")], 0)
if snap:
    tot = snap["totals"]
    t.check(tot["alloc_count"] > 10000, "only %d allocations tracked" % tot["alloc_count"])
    t.check(len(snap["traces"]) > 10, "only %d traces" % len(snap["traces"]))
t.finish()
