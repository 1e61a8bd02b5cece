#!/usr/bin/env python3
"""A signal handler's realloc through a redirected allocator's own entry
(jemalloc's realloc, tcmalloc's tc_realloc) inside memtop's hook, its old
block's shard busy (MEMTOP_TEST_DEFER_SIGNAL), and with jemalloc its
xallocx of a tracked block (progs/pf_sigapart.c).  The old block must wait
in the queue and its free be accounted as the hook leaves, the new one made
apart with the allocator's plain functions: the 333-byte block is freed in
memtop's data (it once stayed live: no plain functions for these entries).
The block xallocx resized in place has its record freed and is counted
untracked (it once kept its record and size: live).  Argument: je or tc."""
import signal
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker  # noqa: E402

variant = sys.argv[1] if len(sys.argv) > 1 else ""
if variant not in ("je", "tc"):
    sys.exit("usage: pf_sigapart.py je|tc")
t = Test("sigapart_" + variant)
prog = t.prog("pf_sigapart_" + variant)


def run():
    shm = t.shm_dir()
    env = {"MEMTOP_INTERVAL_MS": "50", "MEMTOP_TEST_DEFER_SIGNAL": str(int(signal.SIGURG))}
    proc = t.popen_preloaded([prog], shm, env)
    after = done = None
    try:
        line = proc.stdout.readline().split()
        if t.check(len(line) == 2 and line[0] == "ready", "expected 'ready PID', got %r" % line):
            pid = int(line[1])
            proc.stdin.write("g\n")
            proc.stdin.flush()
            done = proc.stdout.readline().split()
            if t.check(done == ["done", "1"], "expected 'done 1' (one handler), got %r" % done):
                after = t.export_live(pid, shm, "after.json")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        err = proc.stderr.read()
    t.check(proc.returncode == 0, "exit %d: %s" % (proc.returncode, err[-2000:]))
    if after is None:
        return
    checks = [(333, "the block the handler's realloc moved")]
    if variant == "je":
        checks.append((444, "the block the handler's xallocx resized in place"))
    for size, what in checks:
        m = marker(after, size)
        t.log("%d-byte blocks: %r" % (size, {k: m[k] for k in ("alloc_count", "free_count",
                                                                 "live_count")}))
        t.check(m["alloc_count"] == 1 and m["free_count"] == 1 and m["live_count"] == 0,
                "%s: alloc/free/live %d/%d/%d in memtop's data, expected 1/1/0"
                % (what, m["alloc_count"], m["free_count"], m["live_count"]))


if not t.have_lib or not t.memtop:
    t.expect(t.run_plain([prog], input="g\n"), 0)
    t.finish()
run()
t.finish()
