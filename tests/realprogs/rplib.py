"""rplib -- shared bits of the real-program tests: import of the pitfall
tests' driver library, program lookup (skip when not installed) and the
"memtop really tracked it" check."""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pitfalls", "lib"))
from mtplib import SKIP, Test  # noqa: E402,F401


def script(name):
    return os.path.join(HERE, "scripts", name)


def need(*progs):
    """Absolute paths of the programs, or exit SKIP if one is missing."""
    paths = [shutil.which(p) for p in progs]
    if None in paths:
        print("SKIP: not installed: %s" % [p for p, q in zip(progs, paths) if q is None])
        sys.exit(SKIP)
    return paths


def check_tracked(t, snap, what, min_allocs=1):
    """The final snapshot shows real tracking: traces with frames, and
    allocations counted."""
    if snap is None:
        return
    tot = snap.get("totals", {})
    traces = snap.get("traces", [])
    t.check(tot.get("alloc_count", 0) >= min_allocs, "%s: totals.alloc_count = %s (want >= %d)"
            % (what, tot.get("alloc_count"), min_allocs))
    t.check(len(traces) > 0, "%s: no traces in the snapshot" % what)
    t.check(any(tr.get("frames") for tr in traces), "%s: no trace has frames" % what)
