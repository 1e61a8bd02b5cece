#!/usr/bin/env python3
"""check_rates.py -- the rates of a one-shot report are taken over a window
that means something (view.h, mt_rates): at least a second and a publish
interval, or the target's whole life, said as such.

Each one-shot `memtop -p PID --export -` (and `--batch -n 1`) asks the
target to publish at once, milliseconds after its previous snapshot: a rate
between those two points was 0 or a burst of 2-5x.  A target doing exactly
RATE allocations a second (steady_rate.c) is exported 10 times in a row,
publishing each second and each 10 ms, and its /metrics scraped: every rate
must be within 0.5x-1.5x of RATE (never 0) and say its window.  The band is
wide and the rate small, for a loaded 2-core machine.
"""

import os
import re
import sys
import time

import e2elib
from e2elib import check, fail

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
import fleetlib  # noqa: E402

RATE = 1000
RATE_LINE = re.compile(r"^rate: (\d+) allocs/s \(.*?\), (\d+) frees/s over "
                       r"(the last|its whole life,) ([0-9.]+) (ms|s) \|", re.M)


def rate_of(text, what):
    """(allocs/s, frees/s, window in s, whole life) of a report's rate line."""
    m = RATE_LINE.search(text)
    check(m, "%s: no 'rate: N allocs/s ... over the last T' line:\n%s" % (what, text[:600]))
    window = float(m.group(4)) / (1000 if m.group(5) == "ms" else 1)
    return int(m.group(1)), int(m.group(2)), window, m.group(3) != "the last"


def check_rate(text, what):
    allocs, frees, window, life = rate_of(text, what)
    check(not life and window >= 0.89,
          "%s: rate over %s %.3f s, not the last second or more" %
          (what, "its whole life" if life else "the last", window))
    for name, r in (("allocs", allocs), ("frees", frees)):
        check(0.5 * RATE <= r <= 1.5 * RATE,
              "%s: %d %s/s for a steady %d/s over %.3f s" % (what, r, name, RATE, window))


def one_shots(ctx, args, pid, tag):
    for i in range(10):
        what = "%s export %d" % (tag, i + 1)
        proc = e2elib.run([args.memtop, "-p", str(pid), "--export", "-"], ctx.env)
        check(proc.returncode == 0, "%s failed:\n%s" % (what, e2elib.describe(proc)))
        check_rate(proc.stdout, what)
    for i in range(3):
        what = "%s --batch -n 1 (%d)" % (tag, i + 1)
        proc = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env)
        check(proc.returncode == 0, "%s failed:\n%s" % (what, e2elib.describe(proc)))
        check_rate(proc.stdout, what)


def young(ctx, args, pid):
    """A target younger than the window: its rate over its whole life, said."""
    proc = e2elib.run([args.memtop, "-p", str(pid), "--export", "-"], ctx.env)
    check(proc.returncode == 0, "young export failed:\n%s" % e2elib.describe(proc))
    _, _, window, life = rate_of(proc.stdout, "young export")
    check(life or window >= 0.89, "young export: a rate over the last %.3f s" % window)


def scrapes(ctx, args, pid):
    """/metrics scraped every 0.2 s: the rate gauge of pid in the band."""
    serve, base = fleetlib.start_serve(ctx, args)
    try:
        for i in range(6):
            status, _, body = fleetlib.http_get(base + "/metrics")
            check(status == 200, "/metrics: HTTP %s" % status)
            got = [v for (name, labels), v in fleetlib.metric_samples(body.decode()).items()
                   if name == "memtop_allocations_per_second" and ("pid", str(pid)) in labels]
            check(len(got) == 1, "scrape %d: no memtop_allocations_per_second of pid %d" %
                  (i + 1, pid))
            check(0.5 * RATE <= got[0] <= 1.5 * RATE,
                  "scrape %d: memtop_allocations_per_second %s for a steady %d/s" %
                  (i + 1, got[0], RATE))
            time.sleep(0.2)
    finally:
        e2elib.stop(serve)


def run_target(ctx, args, interval_ms, tag):
    extra = {"MEMTOP_INTERVAL_MS": interval_ms} if interval_ms else {}
    target = e2elib.start_preloaded(ctx, [args.steady, str(RATE), "120"], **extra)
    try:
        e2elib.wait_segment(ctx, target)
        young(ctx, args, target.pid)
        time.sleep(2.5)  # older than the window, with a timeline to take it from
        one_shots(ctx, args, target.pid, tag)
        if interval_ms:
            scrapes(ctx, args, target.pid)
    finally:
        e2elib.stop(target)


def test(args):
    if not args.steady:
        fail("--steady (steady_rate) is required")
    ctx = e2elib.Ctx(args)
    run_target(ctx, args, None, "1 s interval:")
    run_target(ctx, args, 10, "MEMTOP_INTERVAL_MS=10:")


if __name__ == "__main__":
    e2elib.main(test, __doc__)
