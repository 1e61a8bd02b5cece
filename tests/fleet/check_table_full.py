#!/usr/bin/env python3
"""check_table_full.py -- a full trace table is said by /metrics and pprof.

Why it exists: with the trace table full (MEMTOP_MAX_TRACES), backtraces
seen since are counted in the (overflow) trace, not their own: --batch and
the JSON said so (trace_table_full), but /metrics showed memtop_data_exact 1
and nothing else, and the pprof profile's comment said "data: exact (every
allocation and free counted, not sampled)" with most allocations in
(overflow).

Asserts, on fleet-stacks (5000 distinct backtraces) under the preload with
MEMTOP_MAX_TRACES=1024: the JSON's health.trace_table_full is true and its
exact false; /metrics has memtop_trace_table_full 1 and memtop_data_exact 0
for it (and 0 / 1 for a fleet-leaker beside it); the profile of
/pprof/heap?pid= says "data: NOT exact: trace table full (1024 traces ...".
"""

import gzip
import os

import fleetlib
from fleetlib import check, e2elib

STACKS = fleetlib.take_arg("--stacks")
MAX = 1024


def series(base, pid, name):
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    got = [v for (n, labels), v in fleetlib.metric_samples(body.decode()).items()
           if n == name and ("pid", str(pid)) in labels]
    return got[0] if len(got) == 1 else None


def test(args):
    ctx = e2elib.Ctx(args)
    ready = ctx.path("ready-stacks")
    full = e2elib.start_preloaded(ctx, [STACKS, ready, "5000"], MEMTOP_MAX_TRACES=str(MAX))
    leaker = fleetlib.start_leaker(ctx, args, ctx.path("ready"))
    serve = None
    try:
        fleetlib.wait_ready(full, ready, "fleet-stacks")
        snap = fleetlib.export_json(ctx, args, full.pid, "full.json")
        check(snap["health"]["trace_table_full"] is True,
              "JSON health: %r" % snap["health"])
        check(snap["health"]["exact"] is False and
              "trace table full" in (snap["health"]["not_exact"] or ""),
              "JSON health of a full trace table: %r" % snap["health"])
        serve, base = fleetlib.start_serve(ctx, args)
        e2elib.wait_for(lambda: series(base, full.pid, "memtop_data_exact") is not None and
                        series(base, leaker.pid, "memtop_data_exact") is not None,
                        "both processes in /metrics")
        got = {(p, n): series(base, pid, n) for p, pid in (("full", full.pid),
                                                           ("leaker", leaker.pid))
               for n in ("memtop_trace_table_full", "memtop_data_exact")}
        want = {("full", "memtop_trace_table_full"): 1, ("full", "memtop_data_exact"): 0,
                ("leaker", "memtop_trace_table_full"): 0, ("leaker", "memtop_data_exact"): 1}
        check(got == want, "/metrics: %r, want %r" % (got, want))
        status, _, body = fleetlib.http_get(base + "/pprof/heap?pid=%d" % full.pid)
        check(status == 200, "/pprof/heap: %s" % status)
        raw = gzip.decompress(body)
        check(b"data: NOT exact: trace table full (1,024 traces" in raw or
              b"data: NOT exact: trace table full (1024 traces" in raw,
              "the profile's comments do not say the trace table is full: %r" %
              [s for s in raw.split(b"\n") if b"data:" in s][:3])
        check(b"data: exact" not in raw, "the profile still says data: exact")
        print("ok: a full trace table (MEMTOP_MAX_TRACES=%d, 5000 stacks): "
              "memtop_trace_table_full 1, memtop_data_exact 0, pprof says so" % MAX)
    finally:
        for p in (serve, full, leaker):
            if p:
                e2elib.stop(p)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
