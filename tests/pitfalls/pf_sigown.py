#!/usr/bin/env python3
"""Signal handlers that allocate while the thread runs memtop's own work
(MT_IN_OWN: here an exec's preparation and its undo, progs/pf_sigown.c,
whose getpid raises SIGUSR1 while armed; memtop calls it there).  Such a
handler's blocks were counted nowhere while the data said exact: between
two exports of the live process, every block the handlers allocated must
be counted, tracked or untracked, and every free, matched or unknown.

Argument je (pf_sigown_je, with jemalloc): one handler also resizes a
tracked 444-byte block in place (xallocx) and reallocs two tracked
4096-byte blocks to 4000 bytes (libc's realloc, jemalloc's own: in place,
as a rule).  memtop's own work cannot touch the block table there: a block
resized in place keeps its record (live, 1 block) and the resize is
counted untracked (its size is not known: not exact); a block a realloc
moved counts an unknown free.  Each once counted an unknown free, for a
block still live under its record: no free happened (hook_nested.c
mt_nested_resized, mt_nested_realloc_done)."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker  # noqa: E402

variant = sys.argv[1] if len(sys.argv) > 1 else ""
if variant not in ("", "je"):
    sys.exit("usage: pf_sigown.py [je]")
t = Test("sigown" + ("_" + variant if variant else ""))
prog = t.prog("pf_sigown" + ("_" + variant if variant else ""))


def run(mode, rate):
    shm = t.shm_dir("shm-" + mode)
    extra = {"MEMTOP_INTERVAL_MS": "50"}
    if rate:
        extra["MEMTOP_SAMPLE"] = rate
    proc = t.popen_preloaded([prog], shm, extra)
    before = after = done = None
    try:
        line = proc.stdout.readline().split()
        if t.check(len(line) == 2 and line[0] == "ready",
                   "%s: expected 'ready PID', got %r" % (mode, line)):
            pid = int(line[1])
            before = t.export_live(pid, shm, mode + "-before.json")
            proc.stdin.write("g\n")
            proc.stdin.flush()
            done = proc.stdout.readline().split()
            if t.check(len(done) == (6 if variant else 4) and done[0] == "done",
                       "%s: expected 'done A F R%s', got %r"
                       % (mode, " RESIZED MOVED" if variant else "", done)):
                after = t.export_live(pid, shm, mode + "-after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read()
    t.check(proc.returncode == 0, "%s: exit %d: %s" % (mode, proc.returncode, err[-2000:]))
    if before is None or after is None:
        return
    allocs, frees, raised = map(int, done[1:4])
    resized, moved = (int(done[4]), int(done[5])) if variant else (0, 0)
    t.check(raised >= 1, "%s: memtop called no getpid in the exec's preparation" % mode)
    got = {k: after["totals"][k] - before["totals"][k] for k in ("alloc_count", "free_count")}
    health = {k: after["health"][k] - before["health"][k]
              for k in ("untracked_alloc_count", "unknown_free_count", "missed_free_count")}
    t.log("%s: %d raises; the handlers made %d allocations, %d frees; totals grew by %r, "
          "health by %r" % (mode, raised, allocs, frees, got, health))
    untracked = health["untracked_alloc_count"]
    t.check(got["alloc_count"] + untracked == allocs + resized + moved,
            "%s: allocations: the handlers made %d, resized %d in place and moved %d, memtop "
            "counted %d and %d untracked"
            % (mode, allocs, resized, moved, got["alloc_count"], untracked))
    unknown = 0 if rate else health["unknown_free_count"]
    t.check(got["free_count"] + unknown == frees + moved,
            "%s: frees: the handlers made %d and moved %d blocks, memtop counted %d and %d "
            "unknown" % (mode, frees, moved, got["free_count"], unknown))
    t.check(health["missed_free_count"] == 0, "%s: missed frees: %r" % (mode, health))
    if variant:
        t.check(resized + moved == 3, "%s: the handler resized %d blocks and moved %d, "
                "expected 3 in all" % (mode, resized, moved))
        t.log("%s: %d resized in place, %d moved" % (mode, resized, moved))
        m = marker(after, 444)
        t.check((m["alloc_count"], m["free_count"], m["live_count"]) == (1, 0, 1),
                "%s: the block resized in place keeps its record: alloc/free/live %d/%d/%d, "
                "expected 1/0/1" % (mode, m["alloc_count"], m["free_count"], m["live_count"]))


if not t.have_lib or not t.memtop:
    t.expect(t.run_plain([prog], input="g\n"), 0)
    t.finish()
run("exact", None)
if not variant:
    run("sampled", "4k")
t.finish()
