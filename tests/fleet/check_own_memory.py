#!/usr/bin/env python3
"""check_own_memory.py -- memtop's own memory in a target includes its segment.

Why it exists: memtop said what it costs a target as totals.tracker_bytes,
its bookkeeping only.  The shared segment it publishes into costs more with
many backtraces (about 55 MiB at 65,536 of them, against ~30 MiB of
bookkeeping), and it is RAM on /dev/shm: --batch's "memtop" figure, the
JSON and /metrics left it out.

Asserts, on fleet-stacks (STACKS distinct backtraces, all live, then still)
under the preload: the JSON's totals.segment_bytes, /metrics'
memtop_segment_bytes and --batch's "memtop T + S segment" are the segment
file's allocated blocks (st_blocks * 512, read before and after each: the
figure lies between), and it is at least the per-trace counters the segment
must hold (STACKS * 176 bytes).
"""

import os
import re

import fleetlib
from fleetlib import check, e2elib

STACKS_PROG = fleetlib.take_arg("--stacks")
STACKS = 20000
TRACE_RECORD = 176  # sizeof(mt_shm_trace): one per trace in a snapshot


def held(path):
    return os.stat(path).st_blocks * 512


def between(what, got, lo, hi):
    check(got is not None and lo <= got <= hi,
          "%s is %r; the segment file held %d bytes before and %d after" % (what, got, lo, hi))


def unit_bytes(text):
    """'1.2 MiB' -> bytes (as memtop prints them, to a tenth)."""
    num, unit = text.split()
    return float(num) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def metric(base, pid, name):
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    got = [v for (n, labels), v in fleetlib.metric_samples(body.decode()).items()
           if n == name and ("pid", str(pid)) in labels]
    return int(got[0]) if len(got) == 1 else None


def test(args):
    ctx = e2elib.Ctx(args)
    ready = ctx.path("ready")
    prog = e2elib.start_preloaded(ctx, [STACKS_PROG, ready, str(STACKS)])
    serve = None
    try:
        fleetlib.wait_ready(prog, ready, "fleet-stacks")
        seg = e2elib.wait_segment(ctx, prog)

        lo = held(seg)
        snap = fleetlib.export_json(ctx, args, prog.pid, "own.json")
        hi = held(seg)
        seg_json = snap["totals"].get("segment_bytes")
        between("the JSON's totals.segment_bytes", seg_json, lo, hi)
        check(seg_json >= STACKS * TRACE_RECORD,
              "segment_bytes %d is less than %d traces' counters (%d bytes)" %
              (seg_json, STACKS, STACKS * TRACE_RECORD))

        lo = held(seg)
        out = e2elib.run([args.memtop, "-p", str(prog.pid), "--batch", "-n", "1"], ctx.env)
        hi = held(seg)
        check(out.returncode == 0, "--batch: %s" % e2elib.describe(out))
        m = re.search(r"\| memtop (\S+ \S+) \+ (\S+ \S+) segment$", out.stdout, re.M)
        check(m, "--batch's heap line does not give the segment: %r" %
              [ln for ln in out.stdout.splitlines() if ln.startswith("heap:")])
        shown = unit_bytes(m.group(2))  # rounded to a tenth of its unit
        between("--batch's segment (%s)" % m.group(2), shown, lo * 0.95, hi * 1.05)

        serve, base = fleetlib.start_serve(ctx, args)
        e2elib.wait_for(lambda: metric(base, prog.pid, "memtop_tracker_bytes") is not None,
                        "the process in /metrics")
        lo = held(seg)
        got = metric(base, prog.pid, "memtop_segment_bytes")
        hi = held(seg)
        between("/metrics' memtop_segment_bytes", got, lo, hi)
        print("ok: %d traces: memtop %d bytes of bookkeeping + %d of segment (%.0f B per trace)"
              % (STACKS, snap["totals"]["tracker_bytes"], seg_json, seg_json / STACKS))
    finally:
        for p in (serve, prog):
            if p:
                e2elib.stop(p)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
