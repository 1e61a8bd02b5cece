#!/usr/bin/env python3
"""check_serve_min_age.py -- `memtop --serve --serve-min-age SECS` leaves young processes out.

Why it exists: every exported process adds ~40 series labelled with its
pid, so short-lived processes churn series in Prometheus; --serve-min-age
bounds that.  With --serve-min-age 3, a fleet-leaker just started has no
series (state="too_young" counts it, /pprof/heap?pid= answers 404) while it
is younger than 3 s, and has them once it is older (within a refresh).  A
bad value is a one-line error with exit 2.
"""

import re
import time

import fleetlib
from fleetlib import check, e2elib

MIN_AGE = 3


def scrape(base, pid):
    """(series of pid, {state: value}) from one /metrics scrape."""
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    samples = fleetlib.metric_samples(body.decode())
    mine = [k for k in samples if dict(k[1]).get("pid") == str(pid)]
    states = {dict(k[1])["state"]: v for k, v in samples.items()
              if k[0] == "memtop_exporter_processes"}
    return mine, states


def bad_values(args, ctx):
    for value in ("x", "-1", "1.5", "99999999"):
        proc = e2elib.run([args.memtop, "--serve", "1", "--serve-min-age", value], ctx.env)
        lines = proc.stderr.strip().splitlines()
        check(proc.returncode == 2 and len(lines) == 1 and
              re.search(r"--serve-min-age: not a number of seconds", lines[0]),
              "--serve-min-age %s: expected one error line and exit 2:\n%s" %
              (value, e2elib.describe(proc)))
    print("ok: bad --serve-min-age values are one-line errors, exit 2")


def test(args):
    ctx = e2elib.Ctx(args)
    bad_values(args, ctx)
    serve, base = fleetlib.start_serve(ctx, args, "--serve-min-age", str(MIN_AGE))
    leaker = None
    try:
        leaker = fleetlib.start_leaker(ctx, args, None, blocks=20, hold=0)
        born = time.monotonic()
        e2elib.wait_segment(ctx, leaker)
        young = 0
        while time.monotonic() - born < MIN_AGE - 1:
            mine, states = scrape(base, leaker.pid)
            check(not mine, "%d series of pid %d, %.1f s old, with --serve-min-age %d: %r" %
                  (len(mine), leaker.pid, time.monotonic() - born, MIN_AGE, mine[:3]))
            young = max(young, states.get("too_young", 0))
            status, _, _ = fleetlib.http_get(base + "/pprof/heap?pid=%d" % leaker.pid)
            check(status == 404, "/pprof/heap of a too young pid: %s" % status)
            time.sleep(0.2)
        check(young == 1, "state=\"too_young\" never counted the young process")
        print("ok: no series of pid %d while it is younger than %d s (too_young 1)" %
              (leaker.pid, MIN_AGE))
        mine = e2elib.wait_for(lambda: scrape(base, leaker.pid)[0],
                               "the series of pid %d once it is %d s old" % (leaker.pid, MIN_AGE),
                               timeout=MIN_AGE + 10, step=0.2)
        age = time.monotonic() - born
        check(age >= MIN_AGE - 0.5, "series of pid %d at %.1f s already" % (leaker.pid, age))
        names = {k[0] for k in mine}
        check("memtop_live_bytes" in names, "no memtop_live_bytes of pid %d: %r" % (leaker.pid,
                                                                                   sorted(names)))
        print("ok: %d series of pid %d once it is %.1f s old" % (len(mine), leaker.pid, age))
    finally:
        if leaker:
            e2elib.stop(leaker)
        e2elib.stop(serve)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
