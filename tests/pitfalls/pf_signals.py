#!/usr/bin/env python3
"""Pitfall 3: SIGALRM/SIGPROF handlers (1 kHz) that malloc/free while two
threads churn (malloc/free/realloc) for 2 s.  No deadlock (timeout), no corruption
(the program verifies block contents), a self-consistent final snapshot,
and the handlers' blocks all freed (live 0)."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("signals")
snap = t.run_all([t.prog("pf_signals"), "2"], 0, extra={"MEMTOP_INTERVAL_MS": "20"},
                 timeout=60)
if snap:
    for size, what in ((1003, "SIGALRM handler"), (1013, "SIGPROF handler")):
        m = t.check_marker(snap, size, what, live=0)
        t.log("%s: %d tracked allocations" % (what, m["alloc_count"]))
    t.check(snap["totals"]["live_count"] <= 500,
            "everything was freed, yet totals.live_count = %d" % snap["totals"]["live_count"])
t.finish()
