#!/usr/bin/env python3
"""check_counts.py -- sampled mode's process totals are exact, fast paths included.

Why it exists: in sampled mode an unsampled malloc, calloc, realloc or free
never enters memtop's hook proper: its fast path (hook_enter.h) counts it
into the thread's exact counters, which the publisher sums into the
totals that the export lists as exact (alloc_count, alloc_bytes,
free_count).  sample_cases counts (MEMTOP_SAMPLE=1M) makes a burst of small
calls of every kind between two exports of the live process and says what
they add (the burst runs twice: in the main thread and in a thread that
exits before the second export, whose fast paths counted into its TLS
block); the totals must grow by exactly that, call for call and byte
for byte (realloc: the old block's free and the new block; realloc(p, 0):
a free; realloc(NULL, n): an allocation; free(NULL) and failing
allocations of 2^64-1 bytes, which the fast paths count before the real
call and take back: nothing); the same at MEMTOP_SAMPLE=4k, where the
bytes, counted by the countdown itself, go through many samples and new
distances.  Then the same with a shared
jemalloc after libmemtop.so in LD_PRELOAD (if installed): memtop's hooks
call into it, and jemalloc reports every call to memtop's jemalloc hooks
too (alloc_jemalloc.c): still counted once.  And with an allocator memtop
does not know after it (libsample_naive_alloc.so, tests/sampling/
naive_alloc.c), whose realloc and calloc call malloc and free by name:
those inner calls reach memtop's hooks inside the real call and must not
be counted again (the fast paths call such an allocator inside memtop).
Its allocations only: the frees such a realloc makes inside memtop are
counted as the program's (hook_libc.c free_nested cannot tell them from a
signal handler's), a known excess not checked here.
"""

import os

import subprocess
import time

import samplib  # noqa: F401 (puts tests/e2e on the path)
from samplib import e2elib
from e2elib import check

FIELDS = ("alloc_count", "alloc_bytes", "free_count")


def export(ctx, args, pid, name):
    time.sleep(0.5)  # a few publishes after the last call
    out = ctx.path(name)
    r = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env)
    check(r.returncode == 0, e2elib.describe(r))
    return e2elib.load_json(out)["totals"]


JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"  # Debian's libjemalloc2


def burst(ctx, args, preload, fields=FIELDS, rate="1M"):
    env = ctx.env_with(LD_PRELOAD=preload, MEMTOP_SAMPLE=rate, MEMTOP_INTERVAL_MS=50)
    proc = subprocess.Popen([args.exact, "counts"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        check(line.strip() == "ready", "expected 'ready', got %r" % line)
        before = export(ctx, args, proc.pid, "before.json")
        proc.stdin.write("g")
        proc.stdin.flush()
        line = proc.stdout.readline().split()
        check(len(line) == 4 and line[0] == "done", "expected 'done A B F', got %r" % line)
        want = dict(zip(FIELDS, map(int, line[1:])))
        after = export(ctx, args, proc.pid, "after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    want = {k: want[k] for k in fields}
    got = {k: after[k] - before[k] for k in fields}
    print("%s (%s): the burst made %r, the totals grew by %r" % (preload, rate, want, got))
    check(got == want, "%s (%s): totals not exact: the burst made %r, the totals grew by %r"
          % (preload, rate, want, got))


def test(args):
    ctx = e2elib.Ctx(args)
    burst(ctx, args, args.preload)
    # A small rate: hundreds of samples in each burst, so that the bytes the
    # countdown counts (core_thread_state.h left_base) go through many new
    # distances, in the main thread and in the one that exits.
    burst(ctx, args, args.preload, rate="4k")
    for name in ("libsample_naive_alloc.so", "libsample_naive_alias.so"):
        naive = os.path.join(os.path.dirname(args.preload), name)
        check(os.path.exists(naive), "%s not built" % naive)
        burst(ctx, args, args.preload + " " + naive, ("alloc_count", "alloc_bytes"))
    if os.path.exists(JEMALLOC):
        burst(ctx, args, args.preload + " " + JEMALLOC)
        burst(ctx, args, args.preload + " " + JEMALLOC, rate="4k")  # its fast paths hold the gate
    else:
        print("no %s: the jemalloc case skipped" % JEMALLOC)
    print("ok")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
