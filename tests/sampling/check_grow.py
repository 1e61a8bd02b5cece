#!/usr/bin/env python3
"""check_grow.py -- no sampled free is missed while the free filter grows.

Why it exists: in sampled mode free's fast path asks an address filter
whether the block may be a live sampled one (core_sample.c), and the
filter grows in generations with the live sampled blocks, each new one
filled from the block table while other threads allocate and free, and
threads keep reading older generations for a while.  A count that falls
below the truth in any generation lets a sampled block's free pass
unseen: the block then stays live in the export for ever.  sample_cases
grow (MEMTOP_SAMPLE=16: every 1 KiB block sampled, weight 1) climbs
through every generation from four threads at once, then frees all but
400 blocks; the site must show exactly those live, and every free.
"""

import subprocess
import time

import samplib  # noqa: F401 (puts tests/e2e on the path)
from samplib import e2elib, site_sum
from e2elib import check

THREADS, N, KEEP, SIZE = 4, 12000, 100, 1024  # sample_cases.c GROW_*


def test(args):
    ctx = e2elib.Ctx(args)
    env = ctx.env_with(LD_PRELOAD=args.preload, MEMTOP_SAMPLE="16", MEMTOP_INTERVAL_MS=50)
    proc = subprocess.Popen([args.exact, "grow"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", "expected 'ready', got %r" % line)
        time.sleep(0.5)  # a few publishes after the last call
        out = ctx.path("live.json")
        r = e2elib.run([args.memtop, "-p", str(proc.pid), "--export", out], ctx.env)
        check(r.returncode == 0, e2elib.describe(r))
        snap = e2elib.load_json(out)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    got = {k: site_sum(snap, "grow_alloc", k)
           for k in ("live_bytes", "live_count", "alloc_count", "free_count")}
    want = {"live_bytes": THREADS * KEEP * SIZE, "live_count": THREADS * KEEP,
            "alloc_count": THREADS * N, "free_count": THREADS * (N - KEEP)}
    print("grow_alloc: got %r, want %r" % (got, want))
    check(got == want, "sampled frees missed or miscounted: got %r, want %r" % (got, want))
    print("ok")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
