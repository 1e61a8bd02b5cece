#!/usr/bin/env python3
"""Pitfall 3, counted: a program whose SIGPROF and SIGALRM handlers (every
20 us) allocate and free through its own async-signal-safe allocator
(progs/pf_sigbump.c, which memtop interposes in front of) while its main
loop allocates and frees (progs/pf_sigcount.c), and realloc blocks the
main loop allocated (tracked) and hands them.  The program counts every
call it makes between two exports of the live process; memtop's process
totals must account for each exactly once, in exact mode and sampled
(MEMTOP_SAMPLE=4k and 64k).  A handler's call that interrupted memtop itself
cannot be tracked (it may not take the locks the interrupted code may
hold): its allocation is counted as untracked, its free as unknown (exact
mode) or as a free (sampled mode, where frees are counted, not matched),
its bytes nowhere (so the bytes missing must be those of the untracked
handler blocks); such a call's realloc of a tracked block frees it, counted
as any free (it was once counted nowhere, its record left live).  Everything else is counted exactly, to the byte.
Sampled, the allocations of the loop's last quarter (its own call site,
late_alloc) must be sampled too: an estimate within 25 % of what it
allocated (a thread whose countdown a handler left at or below 0 sampled
nothing more).  Once per run a handler runs inside memtop's
pthread_setspecific, as a new thread's first hook makes the thread's
record (the program's own definition raises SIGPROF): its calls were once
counted nowhere.

With the argument "mi" (ctest pitfall_sigcount_mi), the program calls
mimalloc's names (mi_malloc, mi_calloc, mi_realloc, mi_free of a library
that exports them, pf_sigbump.c built with PF_SIGBUMP_MI): memtop hooks
that API apart from libc's names (hook_direct.h), where a handler's call
that found the thread inside memtop once passed through uncounted (its
allocation not even untracked, a tracked block's free nowhere), in memtop's
bookkeeping and in the real call alike (it could not be told from the
allocator calling its own entries: hook_nested.h).  The same exact totals
are wanted.
"""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

FIELDS = ("alloc_count", "alloc_bytes", "free_count")
HEALTH = ("untracked_alloc_count", "unknown_free_count", "missed_free_count")
HANDLER_MIN, HANDLER_MAX = 8, 519  # the handlers' block sizes (pf_sigcount.c)

variant = sys.argv[1] if len(sys.argv) > 1 else ""
if variant not in ("", "mi"):
    sys.exit("usage: pf_sigcount.py [mi]")
suffix = "_" + variant if variant else ""
t = Test("sigcount" + suffix)
prog = t.prog("pf_sigcount" + suffix)


def site(snap, fn, key):
    """key summed over the traces whose innermost frame is in function fn."""
    return sum(tr[key] for tr in snap["traces"]
               if (tr.get("frames") or [{}])[0].get("function") == fn)


def run(mode, rate, steps):
    """Runs the program preloaded; (its 'done' counts, export before, after)."""
    shm = t.shm_dir("shm-" + mode)
    extra = {"MEMTOP_INTERVAL_MS": "50"}
    if rate:
        extra["MEMTOP_SAMPLE"] = rate
    proc = t.popen_preloaded([prog, str(steps), "20"], shm, extra)
    before = after = done = None
    try:
        line = proc.stdout.readline().split()
        if t.check(len(line) == 2 and line[0] == "ready",
                   "%s: expected 'ready PID', got %r" % (mode, line)):
            pid = int(line[1])
            before = t.export_live(pid, shm, mode + "-before.json")
            proc.stdin.write("g")
            proc.stdin.flush()
            done = proc.stdout.readline().split()
            if t.check(len(done) == 7 and done[0] == "done",
                       "%s: expected 'done A B F S LA LB', got %r" % (mode, done)):
                after = t.export_live(pid, shm, mode + "-after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read()
    t.check(proc.returncode == 0, "%s: exit %d: %s" % (mode, proc.returncode, err[-2000:]))
    t.log("%s: %s" % (mode, err.strip()))
    t.check("a handler ran inside memtop's pthread_setspecific" in err,
            "%s: no handler ran inside memtop's pthread_setspecific: %s" % (mode, err.strip()[-300:]))
    if before is None or after is None:
        return None
    return list(map(int, done[1:])), before, after


def burst(mode, rate=None, steps=400000):
    r = run(mode, rate, steps)
    if r is None:
        return
    (allocs, nbytes, frees, signals, late_allocs, late_bytes), before, after = r
    want = dict(zip(FIELDS, (allocs, nbytes, frees)))
    got = {k: after["totals"][k] - before["totals"][k] for k in FIELDS}
    health = {k: after["health"][k] - before["health"][k] for k in HEALTH}
    t.log("%s: %d signals; the program made %r, the totals grew by %r; health %r"
          % (mode, signals, want, got, health))
    t.check(signals >= 100, "%s: only %d signals" % (mode, signals))
    untracked = health["untracked_alloc_count"]
    t.check(got["alloc_count"] + untracked == allocs,
            "%s: allocations: the program made %d, memtop counted %d and %d untracked"
            % (mode, allocs, got["alloc_count"], untracked))
    unknown = 0 if rate else health["unknown_free_count"]
    t.check(got["free_count"] + unknown == frees,
            "%s: frees: the program made %d, memtop counted %d (free_count) + %d (unknown)"
            % (mode, frees, got["free_count"], unknown))
    if not rate:
        t.check(unknown == untracked, "%s: %d untracked allocations, %d unknown frees"
                % (mode, untracked, unknown))
    missing = nbytes - got["alloc_bytes"]
    t.check(HANDLER_MIN * untracked <= missing <= HANDLER_MAX * untracked,
            "%s: bytes: the program allocated %d, memtop counted %d: %d missing for %d "
            "untracked handler blocks of %d .. %d bytes"
            % (mode, nbytes, got["alloc_bytes"], missing, untracked, HANDLER_MIN, HANDLER_MAX))
    t.check(health["missed_free_count"] == 0, "%s: %d missed frees"
            % (mode, health["missed_free_count"]))
    if rate:
        est = site(after, "late_alloc", "alloc_bytes")
        t.log("%s: late_alloc allocated %d bytes in %d blocks, estimated %d bytes"
              % (mode, late_bytes, late_allocs, est))
        t.check(abs(est - late_bytes) <= late_bytes / 4,
                "%s: late_alloc allocated %d bytes, estimated %d: sampling stopped?"
                % (mode, late_bytes, est))


if not t.have_lib or not t.memtop:
    t.expect(t.run_plain([prog, "20000"], input="g"), 0)
    t.finish()
burst("exact")
burst("sampled-4k", "4k", 1000000)
burst("sampled-64k", "64k", 1000000)
t.finish()
