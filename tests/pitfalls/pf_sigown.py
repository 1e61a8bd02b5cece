#!/usr/bin/env python3
"""Signal handlers that allocate while the thread runs memtop's own work
(MT_IN_OWN: here an exec's preparation and its undo, progs/pf_sigown.c,
whose getpid raises SIGUSR1 while armed; memtop calls it there).  Such a
handler's blocks were counted nowhere while the data said exact: between
two exports of the live process, every block the handlers allocated must
be counted, tracked or untracked, and every free, matched or unknown."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("sigown")
prog = t.prog("pf_sigown")


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
            if t.check(len(done) == 4 and done[0] == "done",
                       "%s: expected 'done A F R', got %r" % (mode, done)):
                after = t.export_live(pid, shm, mode + "-after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read()
    t.check(proc.returncode == 0, "%s: exit %d: %s" % (mode, proc.returncode, err[-2000:]))
    if before is None or after is None:
        return
    allocs, frees, raised = map(int, done[1:])
    t.check(raised >= 1, "%s: memtop called no getpid in the exec's preparation" % mode)
    got = {k: after["totals"][k] - before["totals"][k] for k in ("alloc_count", "free_count")}
    health = {k: after["health"][k] - before["health"][k]
              for k in ("untracked_alloc_count", "unknown_free_count", "missed_free_count")}
    t.log("%s: %d raises; the handlers made %d allocations, %d frees; totals grew by %r, "
          "health by %r" % (mode, raised, allocs, frees, got, health))
    untracked = health["untracked_alloc_count"]
    t.check(got["alloc_count"] + untracked == allocs,
            "%s: allocations: the handlers made %d, memtop counted %d and %d untracked"
            % (mode, allocs, got["alloc_count"], untracked))
    unknown = 0 if rate else health["unknown_free_count"]
    t.check(got["free_count"] + unknown == frees,
            "%s: frees: the handlers made %d, memtop counted %d and %d unknown"
            % (mode, frees, got["free_count"], unknown))
    t.check(health["missed_free_count"] == 0, "%s: missed frees: %r" % (mode, health))


if not t.have_lib or not t.memtop:
    t.expect(t.run_plain([prog], input="g\n"), 0)
    t.finish()
run("exact", None)
run("sampled", "4k")
t.finish()
