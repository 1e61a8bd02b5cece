#!/usr/bin/env python3
"""check_realloc.py -- realloc of sampled and unsampled blocks, all four ways.

Why it exists: in sampled mode the block table holds only sampled blocks,
so realloc must find the old block when it was sampled (and charge its
free), pass quietly when it was not, and sample the new block on its own.
sample_cases realloc (MEMTOP_SAMPLE=1M) does each combination at its own
call sites with 16-byte blocks (never sampled in practice) and 256 MiB ones
(always sampled, weight exactly 1); the live process's export must show
exactly the sampled blocks where they are, their frees charged, and nothing
for the unsampled ones.
"""

import subprocess
import time

import samplib
from samplib import e2elib, site_sum, MIB
from e2elib import check

BIG = 256 * MIB


def export_live(ctx, args, cmd):
    env = ctx.env_with(LD_PRELOAD=args.preload, MEMTOP_SAMPLE="1M", MEMTOP_INTERVAL_MS=50)
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", "expected 'ready', got %r; stderr: %s" %
              (line, proc.stderr.read() if proc.poll() is not None else ""))
        time.sleep(0.5)  # a few publishes after the last call
        out = ctx.path("live.json")
        r = e2elib.run([args.memtop, "-p", str(proc.pid), "--export", out], ctx.env)
        check(r.returncode == 0, e2elib.describe(r))
        return e2elib.load_json(out)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test(args):
    ctx = e2elib.Ctx(args)
    snap = export_live(ctx, args, [args.exact, "realloc"])
    check(snap["sampling"]["rate_bytes"] == 1 << 20, "rate: %r" % snap["sampling"])
    want = {  # site: (live_bytes, alloc_bytes, free_count)
        "uu_alloc": (0, 0, 0), "uu_realloc": (0, 0, 0),       # unsampled -> unsampled
        "us_alloc": (0, 0, 0), "us_realloc": (BIG, BIG, 0),   # unsampled -> sampled
        "su_alloc": (0, BIG, 1), "su_realloc": (0, 0, 0),     # sampled -> unsampled
        "ss_alloc": (0, BIG, 1), "ss_realloc": (2 * BIG, 2 * BIG, 0),  # sampled -> sampled
    }
    for site, (live, alloc, frees) in sorted(want.items()):
        got = (site_sum(snap, site, "live_bytes"), site_sum(snap, site, "alloc_bytes"),
               site_sum(snap, site, "free_count"))
        print("%-11s live %d alloc %d frees %d" % ((site,) + got))
        check(got == (live, alloc, frees), "%s: expected live %d, alloc %d, frees %d; got %r"
              % (site, live, alloc, frees, got))
    tot = snap["totals"]
    check(3 * BIG <= tot["live_bytes"] < 3 * BIG + 16 * MIB,
          "estimated live %d, expected 3 x 256 MiB and little else" % tot["live_bytes"])
    check(tot["alloc_count"] >= 8 and tot["free_count"] >= 4,
          "exact totals miss the calls: %r" % tot)
    print("ok")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
