#!/usr/bin/env python3
"""Pitfall (time): no system call per allocation.

The hooks read the time through the vDSO and keep their state in memory: a
thread that allocates makes no system call for it.  progs/pf_hotloop.c makes
200,000 frees and allocations between two getsid(0) calls; run preloaded
under strace -f, its thread must make (almost) no other system call between
them: at most a few dozen (a table that grows maps memory), never one per
allocation.  With SYSCALL_EACH=1 the program itself makes one per step,
which the same count must see (the driver checking itself).  Skipped
without strace."""
import re
import shutil
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import SKIP, Test  # noqa: E402

STEPS = 200000
ALLOWED = 64  # far below one per 1,000 allocations

t = Test("syscalls")
if not shutil.which("strace"):
    print("SKIP: strace is not installed")
    sys.exit(SKIP)


def calls_between_markers(log):
    """The system calls of the first process's main thread between its two
    getsid() calls (strace -f log), as a list of names."""
    lines = [ln.split(None, 1) for ln in open(log).read().splitlines() if ln.strip()]
    main = lines[0][0] if lines else None
    names = [re.match(r"\w+", rest).group(0) for pid, rest in lines  # one per call:
             if pid == main and re.match(r"\w", rest)]  # not "<... resumed>", "+++", "---"
    marks = [i for i, n in enumerate(names) if n == "getsid"]
    if len(marks) != 2:
        return None
    return names[marks[0] + 1:marks[1]]


def run(label, env):
    log = t.path(label + ".strace")
    cmd = ["strace", "-f", "-qq", "-o", log] + ["-E%s=%s" % kv for kv in env.items()]
    res = t.run(cmd + [t.prog("pf_hotloop")], label, timeout=120)
    t.check(res.rc == 0 and "pf_hotloop done" in res.out, "%s failed" % label, res)
    return calls_between_markers(log) if res.rc == 0 else None


shm = t.shm_dir()
env = {"MEMTOP_SHM_DIR": shm, "MEMTOP_START_MS": "0"}
if t.have_lib:
    env["LD_PRELOAD"] = t.lib
calls = run("preloaded", env)
if t.check(calls is not None, "no two getsid() markers in the preloaded run's log"):
    t.check(len(calls) <= ALLOWED, "%d system calls during %d allocations (at most %d): %s"
            % (len(calls), STEPS, ALLOWED, sorted(set(calls))))
    t.log("%d system calls during %d allocations: %s" % (len(calls), STEPS, sorted(set(calls))))
calls = run("each", dict(env, SYSCALL_EACH="1"))
t.check(calls is not None and calls.count("getuid") == STEPS,
        "the count misses the program's own getuid() per step: %s"
        % (None if calls is None else calls.count("getuid")))
t.finish()
