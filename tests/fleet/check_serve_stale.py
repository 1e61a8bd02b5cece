#!/usr/bin/env python3
"""check_serve_stale.py -- `memtop --serve` on a process stopped with SIGSTOP.

Why it exists: a stopped or hung process keeps its last snapshot readable,
and the exporter went on exporting it as if live, with rates from its last
two snapshots (or worse, from two points of its timeline).  An operator's
alert must be able to tell.

Asserts, on memtop-demo (a steady allocation rate) under the preload: while
it runs, memtop_snapshot_age_seconds is small, memtop_publishing 1 and
memtop_allocations_per_second present; within a few seconds of SIGSTOP,
memtop_publishing is 0, the age 3 s or more and growing, and the three
rate gauges and the growth are absent (not the last rate); the counters stay
(their last values); /pprof/heap's profile has a "not publishing: ..." comment.
After SIGCONT: publishing 1 again and the rates back.
"""

import os
import signal
import time

import fleetlib
from fleetlib import check, e2elib

RATES = ("memtop_allocations_per_second", "memtop_allocated_bytes_per_second",
         "memtop_frees_per_second")


def scrape(base, pid):
    """{metric name: value} of pid's per-process series."""
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    out = {}
    for (name, labels), v in fleetlib.metric_samples(body.decode()).items():
        if dict(labels).get("pid") == str(pid) and "trace_id" not in dict(labels):
            out.setdefault(name, v)
    return out


def wait_scrape(base, pid, pred, what):
    last = {}

    def ok():
        nonlocal last
        last = scrape(base, pid)
        return last if pred(last) else None

    try:
        return e2elib.wait_for(ok, what, timeout=15, step=0.3)
    except e2elib.TestFailure:
        fleetlib.fail("%s; last series of pid %d: %r" % (what, pid, last))


def running(m):
    return (m.get("memtop_publishing") == 1 and all(r in m for r in RATES) and
            "memtop_growth_bytes_per_second" in m and
            m["memtop_allocations_per_second"] > 0 and m.get("memtop_snapshot_age_seconds", 99) < 3)


def stale(m):
    return (m.get("memtop_publishing") == 0 and not any(r in m for r in RATES) and
            "memtop_growth_bytes_per_second" not in m and
            m.get("memtop_snapshot_age_seconds", 0) >= 3 and "memtop_allocations_total" in m)


def test(args):
    ctx = e2elib.Ctx(args)
    demo = e2elib.start_preloaded(ctx, [args.demo, "120"])
    serve = None
    stopped = False
    try:
        e2elib.wait_segment(ctx, demo)
        serve, base = fleetlib.start_serve(ctx, args)
        wait_scrape(base, demo.pid, running, "the demo exported live with its rates")
        os.kill(demo.pid, signal.SIGSTOP)
        stopped = True
        first = wait_scrape(base, demo.pid, stale, "the stopped demo exported as stale, no rates")
        # its pprof profile says so too, in a comment
        status, _, body = fleetlib.http_get(base + "/pprof/heap?pid=%d" % demo.pid)
        with open(ctx.path("stopped.pb.gz"), "wb") as f:
            f.write(body)
        comments = fleetlib.decode_pprof(ctx.path("stopped.pb.gz")).comments if status == 200 else []
        check(any(c.startswith("not publishing: snapshot #") and "stopped (state T)" in c
                  for c in comments), "the stopped demo's profile does not say so: %r" % comments)
        time.sleep(1.5)
        later = wait_scrape(base, demo.pid, stale, "the stopped demo still stale")
        check(later["memtop_snapshot_age_seconds"] > first["memtop_snapshot_age_seconds"],
              "the snapshot's age does not grow: %r then %r" %
              (first["memtop_snapshot_age_seconds"], later["memtop_snapshot_age_seconds"]))
        os.kill(demo.pid, signal.SIGCONT)
        stopped = False
        wait_scrape(base, demo.pid, running, "the continued demo exported live again")
        print("ok: pid %d stopped: publishing 0, age %.1f then %.1f s, no rates or growth; "
              "continued: live" %
              (demo.pid, first["memtop_snapshot_age_seconds"],
               later["memtop_snapshot_age_seconds"]))
    finally:
        if stopped:
            os.kill(demo.pid, signal.SIGCONT)
        for p in (serve, demo):
            if p:
                e2elib.stop(p)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
