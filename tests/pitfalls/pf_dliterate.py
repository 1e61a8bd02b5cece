#!/usr/bin/env python3
"""Allocations inside dl_iterate_phdr callbacks (the loader's lock is held
there) while other threads unwind cold stacks (libunwind then calls
dl_iterate_phdr with its own lock held).  A hook that unwound inside a
callback deadlocked the target (lock-order inversion; only SIGKILL ended
it).  The program repeats the race for 150 rounds of fresh threads and has
a watchdog (exit 98, "DEADLOCK").

Exactness: the callbacks' blocks are tracked without a backtrace, on the
trace without frames: their count and bytes (3 per callback: malloc, realloc,
calloc of marker sizes) are there exactly, every one of them freed (inside
the callback or after dl_iterate_phdr returned), no unknown free, nothing
untracked, and none of them on a trace with frames."""
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker  # noqa: E402

CB_A, CB_B, CB_C = 1531, 2557, 3067
ROUNDS = "150"
RUNS = 3  # preloaded runs: each deadlocked the old code with high probability

t = Test("dliterate")
prog = t.prog("pf_dliterate")


def callbacks(res):
    m = re.search(r"^callbacks (\d+)$", res.out, re.M)
    t.check(m is not None, "%s: no 'callbacks N' line" % res.label, res)
    return int(m.group(1)) if m else None


def check_frameless(snap, n, what):
    """The callbacks' blocks are all on the trace(s) without frames."""
    nf = [tr for tr in snap.get("traces", []) if not tr.get("frames")]
    got = {k: sum(tr[k] for tr in nf) for k in
           ("alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count")}
    want = {"alloc_count": 3 * n, "alloc_bytes": n * (CB_A + CB_B + CB_C),
            "free_count": 3 * n, "free_bytes": n * (CB_A + CB_B + CB_C), "live_count": 0}
    for k, v in want.items():
        t.check(got[k] == v, "%s: trace without frames: %s = %d, expected %d (%d callbacks)"
                % (what, k, got[k], v, n))
    # memtop --export puts them under "health", mtp_segtool in "totals".
    health = dict(snap["totals"], **snap.get("health", {}))
    for k in ("unknown_free_count", "untracked_alloc_count", "missed_free_count"):
        t.check(health.get(k) == 0, "%s: %s = %s, expected 0" % (what, k, health.get(k)))
    for size in (CB_A, CB_B, CB_C):
        m = marker(snap, size)
        t.check(m["alloc_count"] == 0, "%s: %d %d-byte callback blocks on traces with frames "
                "(unwound inside dl_iterate_phdr)" % (what, m["alloc_count"], size))


plain = t.run_plain([prog, ROUNDS], timeout=60)
if t.expect(plain, 0) and t.have_lib:
    for i in range(RUNS):
        shm = t.shm_dir("shm-preloaded")
        pre = t.run_preloaded([prog, ROUNDS], shm, timeout=60)
        if not t.expect(pre, 0):
            break
        t.check_quiet(pre)
        t.check_no_segments(shm, pre.label)
    shm = t.shm_dir("shm-tracked")
    res, snap = t.run_snapshot([prog, ROUNDS], shm, timeout=60)
    if t.expect(res, 0):
        n = callbacks(res)
        snap = t.check_snapshot(snap, res.label)
        if snap and n is not None:
            check_frameless(snap, n, res.label)
t.finish()
