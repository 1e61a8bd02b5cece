#!/usr/bin/env python3
"""Pitfall 7: API corner cases.  The program checks the guaranteed
behaviour itself; glibc-specific results are compared with the plain run's
output; the accounting rules are checked on marker sizes."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("api")
snap = t.run_all([t.prog("pf_api")], 0)
if snap:
    t.check_marker(snap, 1201, "realloc(NULL, n)", alloc=1, free=1)
    t.check_marker(snap, 1213, "block freed by realloc(p, 0)", alloc=1, free=1, live=0)
    t.check_marker(snap, 1217, "block kept by a failed reallocarray", alloc=1, free=1)
    t.check_marker(snap, 1223, "block kept by a failed realloc", alloc=1, free=1)
    huge = [tr["id"] for tr in snap["traces"] if tr["alloc_bytes"] >= 1 << 40]
    t.check(not huge, "failed allocations were counted (traces %s)" % huge[:5])
t.finish()
