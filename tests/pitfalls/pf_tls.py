#!/usr/bin/env python3
"""Pitfall 1 (TLS): 2000 short-lived threads, each touching dynamic TLS of a
dlopen'ed module and allocating at known sites; exact counts expected."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

THREADS = 2000
t = Test("tls")
snap = t.run_all([t.prog("pf_tls")], 0)
t.check_marker(snap, 4093, "malloc in threads", alloc=3 * THREADS, free=3 * THREADS, live=0)
t.check_marker(snap, 7 * 577, "calloc in threads", alloc=THREADS, free=THREADS, live=0)
if snap and "thread_count" in snap["totals"]:
    t.check(snap["totals"]["thread_count"] >= THREADS,
            "totals.thread_count %d < %d threads that allocated"
            % (snap["totals"]["thread_count"], THREADS))
t.finish()
