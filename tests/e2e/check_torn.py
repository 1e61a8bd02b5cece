#!/usr/bin/env python3
"""check_torn.py -- every live snapshot holds whole events (issue 12).

Why it exists: a trace's counters are updated by the hooks of many threads
while the publisher reads them; read one by one, a snapshot could show half
an event (free_bytes already counting a block whose free_count did not yet).
torn_hammer makes 4 threads allocate and free blocks of exactly 48 bytes
from one call site without pause; with a 10 ms publish interval this
exports the live target (`memtop -p PID --export`) many times and checks,
in each snapshot, every trace of that site: alloc_bytes, free_bytes,
live_bytes and temporary_bytes are 48 times their counts, live_count =
alloc_count - free_count, and the totals are the sums of the traces.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

SIZE = 48
EXPORTS = 60
PAIRS = [("alloc_bytes", "alloc_count"), ("free_bytes", "free_count"),
         ("live_bytes", "live_count"), ("temporary_bytes", "temporary_count")]
SUMS = ["live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count", "free_bytes",
        "temporary_count", "temporary_bytes"]


def hammer_traces(snap):
    return [t for t in snap["traces"]
            if any(f.get("function") == "hammer_site" for f in t.get("frames") or [])]


def torn(snap):
    """What in snap is not made of whole 48-byte events, or None."""
    for t in hammer_traces(snap):
        for b, c in PAIRS:
            if t[b] != SIZE * t[c]:
                return "trace %s: %s %d != %d * %s %d" % (t.get("id"), b, t[b], SIZE, c, t[c])
        if t["live_count"] != t["alloc_count"] - t["free_count"]:
            return "trace %s: live_count != alloc_count - free_count" % t.get("id")
    tot = snap["totals"]
    for k in SUMS:
        s = sum(t[k] for t in snap["traces"])
        if s != tot[k]:
            return "totals.%s %d != sum over traces %d" % (k, tot[k], s)
    return None


def test(args):
    ctx = e2elib.Ctx(args)
    proc = e2elib.start_preloaded(ctx, [args.hammer, "4"], MEMTOP_INTERVAL_MS=10,
                                  MEMTOP_START_MS=0)
    try:
        e2elib.wait_segment(ctx, proc)
        seen = 0
        for i in range(EXPORTS):
            out = ctx.path("snap-%d.json" % i)
            cmd = [args.memtop, "-p", str(proc.pid), "--export", out]
            r = e2elib.run(cmd, ctx.env)
            check(r.returncode in (0, 3), "export %d: %s\n%s" % (i, e2elib.show_cmd(cmd),
                                                                e2elib.describe(r)))
            snap = e2elib.load_json(out)
            seen += len(hammer_traces(snap)) > 0
            why = torn(snap)
            check(why is None, "snapshot %d of the live target holds half an event: %s" % (i, why))
            os.unlink(out)
        check(seen > EXPORTS // 2, "hammer_site's traces in %d of %d snapshots" % (seen, EXPORTS))
    finally:
        e2elib.stop(proc)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
