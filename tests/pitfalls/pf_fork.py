#!/usr/bin/env python3
"""Pitfall 4: fork/exec/posix_spawn/vfork from a process whose threads keep
allocating.  No deadlock, children's exit codes right (the program checks),
the parent's snapshot self-consistent and free of its children's
allocations, and no segment left by children that exited with exit()."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, segments  # noqa: E402


def read_children(path):
    kids = {}
    with open(path) as f:
        for line in f:
            pid, mode = line.split()
            kids[int(pid)] = mode
    return kids


def check_leftovers(t, shm, pidlog, what):
    kids = read_children(pidlog)
    left = segments(shm)
    exited = [n for n in left if kids.get(int(n.split("-")[1])) == "exit"]
    others = [n for n in left if int(n.split("-")[1]) not in kids]
    t.check(not exited, "%s: children that called exit() left segments:\n  %s"
            % (what, "\n  ".join(t.describe(shm, n) for n in exited[:10])))
    t.check(not others, "%s: segments of other processes left:\n  %s"
            % (what, "\n  ".join(t.describe(shm, n) for n in others[:10])))
    n_exit = sum(1 for m in kids.values() if m == "_exit")
    t.log("%s: %d of %d children that called _exit left a segment"
          % (what, len(left) - len(exited) - len(others), n_exit))


t = Test("fork")
pidlog = t.path("children.txt")
cmd = [t.prog("pf_fork"), pidlog]
plain = t.run_plain(cmd, timeout=90)
if t.expect(plain, 0) and t.have_lib:
    extra = {"MEMTOP_INTERVAL_MS": "20"}
    shm = t.shm_dir("shm-preloaded")
    pre = t.run_preloaded(cmd, shm, extra, timeout=90)
    t.expect(pre, 0, plain.out)
    t.check_quiet(pre)
    check_leftovers(t, shm, pidlog, pre.label)
    shm = t.shm_dir("shm-tracked")
    res, snap = t.run_snapshot(cmd, shm, extra, timeout=90)
    t.expect(res, 0, plain.out)
    check_leftovers(t, shm, pidlog, res.label)
    snap = t.check_snapshot(snap, res.label)
    if snap:
        t.check(snap.get("fork_child") is not True, "the parent is marked as a fork child")
        t.check_marker(snap, 1019, "children's allocations counted in the parent", alloc=0)
t.finish()
