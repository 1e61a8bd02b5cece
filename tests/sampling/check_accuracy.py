#!/usr/bin/env python3
"""check_accuracy.py -- sampled estimates of a known heap are right within bounds.

Why it exists: sampling is only useful if its estimates are unbiased and as
precise as docs/sampling.md says.  sample_sites allocates 100 MB live over
three call sites in 60/30/10 proportions (random sizes 16 B..64 KiB) in
ROUNDS independent rounds (all freed but the last) and prints the truth and
the standard deviation of each estimate at the rate.

What one heap allows: at 512 KiB the estimate of a site's live bytes B has
a standard deviation of about sqrt(B x 512 KiB), 23 % for the 10 MB site
(9 % for 60 MB), so a single heap cannot promise +-10 % per site (see
docs/sampling.md).  The bound is therefore checked on the average of the
rounds' estimates (each round's allocations are an independent heap of
100 MB; their sum is the trace's estimated alloc_bytes): over 256 rounds
the 10 MB site's standard deviation is 1.45 %, so +-10 % is 6.9 standard
deviations (a false failure once in ~10^11 runs).  The last round's live
estimate of each site is checked within 6 of its own standard deviations.
The process totals of allocations and frees must be exact.

Then the issue's figure for one heap: a single 100 MB heap at a rate low
enough that +-10 % per site is at least 6 standard deviations for the
10 MB site (8 KiB: 0.8 %; docs/sampling.md, "One heap of 100 MB"), each site's
live estimate within +-10 % of the truth.
"""

import samplib
from samplib import e2elib, site_sum
from e2elib import check

ROUNDS = 256
RATE = 512 * 1024
ONE_HEAP_RATE = 8192
SITES = ("site_sixty", "site_thirty", "site_ten")


def parse_truth(out):
    truth, counts = {}, {}
    for line in out.splitlines():
        w = line.split()
        if w and w[0] in SITES:
            truth[w[0]] = {w[i]: float(w[i + 1]) for i in range(1, len(w), 2)}
        elif w and w[0] == "mallocs":
            counts = {"mallocs": int(w[1]), "frees": int(w[3])}
    check(len(truth) == 3 and counts, "sample_sites printed no truth:\n" + out)
    return truth, counts


def test(args):
    ctx = e2elib.Ctx(args)
    out = ctx.path("snap.json")
    cmd = [args.memtop, "--sample", "512k", "--export", out, "--", args.demo, str(ROUNDS),
           str(RATE), "20261126"]
    proc = e2elib.run(cmd, ctx.env, timeout=240)
    check(proc.returncode == 0, e2elib.describe(proc))
    truth, counts = parse_truth(proc.stdout)
    snap = e2elib.load_json(out)
    check(snap["sampling"] and snap["sampling"]["rate_bytes"] == RATE,
          "sampling not said: %r" % snap.get("sampling"))
    for s in SITES:
        t = truth[s]
        avg = site_sum(snap, s, "alloc_bytes")
        err = (avg - t["all"]) / t["all"]
        check(t["all_sd"] * 6 < 0.10 * t["all"], "the test's rounds are too few for 6 sd")
        print("%-12s average of %d rounds: estimated %.0f, true %.0f, error %+.2f %% (sd %.2f %%)"
              % (s, ROUNDS, avg, t["all"], 100 * err, 100 * t["all_sd"] / t["all"]))
        check(abs(err) <= 0.10, "%s: estimate off by %+.1f %% (> 10 %%)" % (s, 100 * err))
        live = site_sum(snap, s, "live_bytes")
        lerr = live - t["live"]
        print("%-12s last heap live: estimated %.0f, true %.0f, error %+.1f %% (sd %.1f %%)"
              % (s, live, t["live"], 100 * lerr / t["live"], 100 * t["live_sd"] / t["live"]))
        check(abs(lerr) <= 6 * t["live_sd"], "%s: live estimate beyond 6 sd" % s)
    tot = snap["totals"]
    # exact: the program's own calls plus a few of libc's (stdio's buffer)
    check(counts["mallocs"] <= tot["alloc_count"] <= counts["mallocs"] + 64,
          "alloc_count %d not exact (program made %d)" % (tot["alloc_count"], counts["mallocs"]))
    check(counts["frees"] <= tot["free_count"] <= counts["frees"] + 64,
          "free_count %d not exact (program made %d)" % (tot["free_count"], counts["frees"]))
    print("ok: totals exact: %d allocs, %d frees" % (tot["alloc_count"], tot["free_count"]))
    check_one_heap(ctx, args)


def check_one_heap(ctx, args):
    """One heap of 100 MB at ONE_HEAP_RATE: each site's live estimate within +-10 %."""
    out = ctx.path("one_heap.json")
    cmd = [args.memtop, "--sample", str(ONE_HEAP_RATE), "--export", out, "--", args.demo, "1",
           str(ONE_HEAP_RATE), "20261127"]
    proc = e2elib.run(cmd, ctx.env, timeout=240)
    check(proc.returncode == 0, e2elib.describe(proc))
    truth, _ = parse_truth(proc.stdout)
    snap = e2elib.load_json(out)
    check(snap["sampling"] and snap["sampling"]["rate_bytes"] == ONE_HEAP_RATE,
          "sampling not said: %r" % snap.get("sampling"))
    for s in SITES:
        t = truth[s]
        check(t["live_sd"] * 6 < 0.10 * t["live"], "rate too high for 6 sd in one heap")
        err = (site_sum(snap, s, "live_bytes") - t["live"]) / t["live"]
        print("%-12s one heap at %d B: live error %+.2f %% (sd %.2f %%)"
              % (s, ONE_HEAP_RATE, 100 * err, 100 * t["live_sd"] / t["live"]))
        check(abs(err) <= 0.10, "%s: one heap's live estimate off by %+.1f %%" % (s, 100 * err))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
