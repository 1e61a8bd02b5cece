#!/usr/bin/env python3
"""Allocations inside a SIGALRM handler (unw_sigalloc.c).  Phase 1: 300
handler runs interrupt a main loop that never allocates.  Phase 2: 300
threads whose only allocations are in a key destructor at thread exit,
one direct and one from a SIGALRM handler it raises.  Backtraces through
the signal frame are left to libunwind; under MEMTOP_UNWIND=check there
must be at least one fallback per handler run, no mismatch (the direct
destructor allocations are compared with libunwind's step-by-step walk
used for exiting threads), and no crash or hang.  Then in the default mode
the final snapshot counts every handler and destructor block exactly, the
handler traces reach past the signal frame, and the 300 exiting threads
leave no per-thread unwinder cache behind (VmSize)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test, check_agree, run_check  # noqa: E402

N, T = 300, 300
# One arena: per-thread malloc arenas would add address space of their own.
ENV = {"MALLOC_ARENA_MAX": "1"}
t = Test("unwind_signal_handler")
cmd = [t.prog("unw_sigalloc"), str(N), str(T)]
s = run_check(t, cmd, "sigalloc", compare_out=False, env=ENV)
check_agree(t, s, "sigalloc", min_own=T)
if s is not None:
    t.check(s.fallback >= N + T, "sigalloc: %d fallback(s), expected >= %d (one per handler run)"
            % (s.fallback, N + T))
    res, snap = t.run_snapshot(cmd, t.shm_dir("shm-auto"), ENV)
    t.expect(res, 0)
    # A timer signal may still land between the loop's end and its block:
    # the program's own count of handler runs is the truth (N + T or more).
    out = re.search(r"handler allocations (\d+) destructor allocations (\d+)\n", res.out)
    handled = int(out.group(1)) if out else N + T
    t.check(out is not None and handled >= N + T and int(out.group(2)) == T,
            "unexpected output: %r" % res.out)
    vm = re.search(r"vm (\d+) (\d+)", res.out)
    if t.check(vm is not None, "no vm line: %r" % res.out):
        grown = (int(vm.group(2)) - int(vm.group(1))) / 1024.0
        t.check(grown < 40, "VmSize grew by %.1f MiB over %d exiting threads (at most 40)"
                % (grown, T))
    snap = t.check_snapshot(snap, res.label)
    if snap is not None:
        m = t.check_marker(snap, 777, "handler blocks", alloc=handled, free=handled)
        t.check_marker(snap, 779, "key destructor blocks", alloc=T, free=T)
        deep = [tr for tr in m["traces"] if len(tr.get("frames") or []) >= 4]
        t.check(deep, "handler traces stop at the signal frame: %s"
                % [len(tr.get("frames") or []) for tr in m["traces"]])
t.finish()
