#!/usr/bin/env python3
"""check_fork.py -- a sampled process's fork child samples on its own.

Why it exists: the child of a sampled process must keep sampling (its own
segment says the rate, its figures are marked), and must not draw the
same random distances as its parent: the two would sample the same
allocations and the child's estimates would copy the parent's errors.
sample_cases fork: after fork, parent and child make the same allocations
(4000 random-size blocks and two of 256 MiB, which are always sampled) at
the site after_fork, after another thread made a burst of calls and
stays, blocked, across the fork (the child folds its TLS counts in: the
totals of parent and child must be equal, byte for byte).  Both live
processes are exported: both include the
two big blocks, and their estimates of the small ones differ (equal
estimates would need the same samples: the child reusing the parent's
generator state, which it is reseeded from at fork).
sample_cases forksmall: the same with only 10 blocks of 16 bytes after the
fork, none sampled: the child's calls all take the fast path, which must
stay closed in a fork child until its first call has restarted tracking
(fork_child disarms its thread: core_sample.h mt_sample_disarm), or the
child never gets a segment.
"""

import subprocess
import time

import samplib
from samplib import e2elib, site_sum, MIB
from e2elib import check


def live_pair(ctx, args, mode):
    """Runs `sample_cases MODE`; returns the exports of parent and child
    (pid -> snapshot), taken while both live."""
    env = ctx.env_with(LD_PRELOAD=args.preload, MEMTOP_SAMPLE="1M", MEMTOP_INTERVAL_MS=50)
    proc = subprocess.Popen([args.exact, mode], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    snaps = {}
    try:
        pids = []
        for _ in range(2):
            w = proc.stdout.readline().split()
            check(len(w) == 3 and w[2] == "ready", "expected 'pid N ready', got %r" % w)
            pids.append(int(w[1]))
        time.sleep(0.5)
        for pid in pids:
            out = ctx.path("snap-%s-%d.json" % (mode, pid))
            r = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env)
            check(r.returncode == 0, "%s: %s" % (mode, e2elib.describe(r)))
            snaps[pid] = e2elib.load_json(out)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    child = [p for p in snaps if snaps[p]["fork_child"]]
    check(len(child) == 1, "%s: expected one fork child among %r" % (mode, list(snaps)))
    # Exact totals: the same calls in both since the start (the child's
    # inherited, the other thread's, still live in the parent, folded in the
    # child at fork), so the same counts, byte for byte.
    tot = {p: {k: snaps[p]["totals"][k] for k in ("alloc_count", "alloc_bytes", "free_count")}
           for p in snaps}
    a, b = tot.values()
    print("%s: totals %r" % (mode, tot))
    check(a == b, "%s: parent and child totals differ: %r" % (mode, tot))
    return snaps


def test(args):
    ctx = e2elib.Ctx(args)
    live_pair(ctx, args, "forksmall")
    snaps = live_pair(ctx, args, "fork")
    child = [p for p in snaps if snaps[p]["fork_child"]]
    est = {}
    for pid, s in snaps.items():
        check(s["sampling"] and s["sampling"]["rate_bytes"] == 1 << 20,
              "pid %d: sampling %r" % (pid, s["sampling"]))
        check(s["health"]["not_exact"].startswith("sampled 1/1 MiB"),
              "pid %d: health says %r" % (pid, s["health"]["not_exact"]))
        live = site_sum(s, "after_fork", "live_bytes")
        check(live >= 512 * MIB, "pid %d: the two 256 MiB blocks are not in %d" % (pid, live))
        est[pid] = (live, site_sum(s, "after_fork", "live_count"))
        print("pid %d%s: after_fork live %d in %d blocks" %
              (pid, " (child)" if pid in child else "", est[pid][0], est[pid][1]))
    a, b = est.values()
    check(a != b, "parent and child sampled the same blocks: the child drew the parent's "
          "distances")
    print("ok")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
