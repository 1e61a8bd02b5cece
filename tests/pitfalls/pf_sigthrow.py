#!/usr/bin/env python3
"""A signal handler's operator new throws std::bad_alloc through memtop's
hook while the thread is inside memtop (progs/pf_sigthrow.cpp, its own
"mimalloc" pf_sigthrow_mi.cpp, whose API memtop hooks): the handler runs
as a thread's first hook makes its record.  After the throw, the thread's
state must say it is inside memtop's bookkeeping again, not inside a real
call: the handler's next block, from the allocator's own call of its
mi_malloc, is the program's, counted as untracked (memtop once took it for
the allocator's own and counted it nowhere; a debug build aborted).  Every
block a handler gets is freed there, an unknown free: between two exports
of the live process the untracked allocations and the unknown frees must
grow alike, and the program must exit 0.  Then the handler resizes a tracked
block in place (mi_expand) and destroys a heap of tracked blocks
(mi_heap_destroy): their records must go (they once stayed, live at their
old size), the resized block counted as untracked."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker  # noqa: E402

t = Test("sigthrow")
prog = t.prog("pf_sigthrow")


def run():
    shm = t.shm_dir()
    proc = t.popen_preloaded([prog], shm, {"MEMTOP_INTERVAL_MS": "50"})
    before = after = done = None
    try:
        line = proc.stdout.readline().split()
        if t.check(len(line) == 2 and line[0] == "ready", "expected 'ready PID', got %r" % line):
            pid = int(line[1])
            before = t.export_live(pid, shm, "before.json")
            proc.stdin.write("g\n")
            proc.stdin.flush()
            done = proc.stdout.readline().split()
            if t.check(done == ["done", "1", "1"],
                       "expected 'done 1 1' (one handler, bad_alloc caught), got %r" % done):
                after = t.export_live(pid, shm, "after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read()
    t.check(proc.returncode == 0, "exit %d: %s" % (proc.returncode, err[-2000:]))
    if before is None or after is None:
        return
    grew = {k: after["health"][k] - before["health"][k]
            for k in ("untracked_alloc_count", "unknown_free_count", "missed_free_count")}
    t.log("health grew by %r" % grew)
    t.check(grew["untracked_alloc_count"] >= 1,
            "the handler's block was not counted as untracked: %r" % grew)
    t.check(grew["untracked_alloc_count"] == grew["unknown_free_count"] + 1,
            "%d untracked allocations, %d unknown frees: expected one more untracked (the "
            "resized block, live): a handler's block after the throw was counted nowhere, or "
            "the resize" % (grew["untracked_alloc_count"], grew["unknown_free_count"]))
    t.check(grew["missed_free_count"] == 0, "missed frees: %r" % grew)
    for size, what in ((777, "the block the handler resized in place (mi_expand)"),
                       (555, "the blocks of the heap the handler destroyed")):
        m = marker(after, size)
        t.check(m["alloc_count"] > 0 and m["live_count"] == 0,
                "%s: %d of %d still live in memtop's data" % (what, m["live_count"],
                                                              m["alloc_count"]))


if not t.have_lib or not t.memtop:
    t.expect(t.run_plain([prog], input="g\n"), 0)
    t.finish()
run()
t.finish()
