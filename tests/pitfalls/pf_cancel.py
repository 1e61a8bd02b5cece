#!/usr/bin/env python3
"""Threads with a cancel pending (deferred) inside memtop's slow paths
(progs/pf_cancel.c): a hook at its recording buffer's bound while the
disk is slow, dlsym's allocator scan of a new module, exit and exec while
recording.  None of those calls is a cancellation point, so the program
runs as plainly (same exit code and output: each thread did all its work
before its own pthread_testcancel), memtop's counts are exact, later scans
still run, and every recording opens (memtop -f --export)."""
import glob
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

REC_SIZE, REC_N = 3203, 200000
DL_SIZE, DL_N = 3217, 100
EXIT_SIZE, EXIT_N = 3229, 10
FORK_SIZE, FORK_N = 3241, 100
MAIN_SIZE, MAIN_N = 3251, 100

t = Test("cancel")
prog = t.prog("pf_cancel")
libdir = os.path.join(os.path.dirname(t.bin), "lib")


def recording(tag, **more):
    """MEMTOP_RECORD to a file per process and image (%p-%n: an exec'd
    image has the same pid) under the test's work dir."""
    env = {"MEMTOP_RECORD": t.path(tag + "-%p-%n.dat")}
    env.update({k: str(v) for k, v in more.items()})
    return env


def check_recordings(tag):
    """Each recording the runs made opens and replays (memtop -f --export)."""
    recs = sorted(glob.glob(t.path(tag + "-*.dat")))
    if not t.have_lib or not t.memtop:
        return
    t.check(recs, "%s: no recording was made" % tag)
    for rec in recs:
        out = rec + ".json"
        res = t.run([t.memtop, "-f", rec, "--export", out], "memtop -f " + os.path.basename(rec))
        t.check(res.rc == 0 and os.path.exists(out), "%s does not open: %s" % (rec, res.describe()),
                res)


def main_thread_exact(snap):
    t.check_marker(snap, MAIN_SIZE, "main thread after its thread", alloc=MAIN_N, free=MAIN_N,
                   live=0)


# A hook at its buffer's bound while every write to the file sleeps 1 s:
# it asks whether the disk is behind (/proc/self/task/TID/stat).
snap = t.run_all([prog, "record"], 0, recording("record", MEMTOP_TEST_WRITE_DELAY_US=1000000),
                 timeout=120)
if snap:
    t.check_marker(snap, REC_SIZE, "blocks past the buffer's bound", alloc=REC_N, free=REC_N,
                   live=0)
    main_thread_exact(snap)
check_recordings("record")

# dlsym after dlopen: the scan reads the new module's file under its lock.
snap = t.run_all([prog, "dlsym", os.path.join(libdir, "libmtp_dlmod.so"),
                  os.path.join(libdir, "libmtp_tlsmod.so")], 0)
if snap:
    t.check_marker(snap, DL_SIZE, "blocks after dlsym", alloc=DL_N, free=DL_N, live=0)
    main_thread_exact(snap)

# exit(3) on a thread while recording: the recording's end, the publisher's.
snap = t.run_all([prog, "exit"], 3, recording("exit"))
if snap:
    t.check_marker(snap, EXIT_SIZE, "blocks live at exit", alloc=EXIT_N, free=0, live=EXIT_N)
check_recordings("exit")

# exec on a thread while recording: the recording sealed, the publisher held.
t.run_all([prog, "exec"], 0, recording("exec"))
check_recordings("exec")

# fork on a thread while recording: the child's atfork handler closes the
# parent's recording, its first hook creates its own (the child's output is
# its exit status, printed by the parent).
snap = t.run_all([prog, "fork"], 0, recording("fork"))
if snap:
    main_thread_exact(snap)
check_recordings("fork")
t.finish()
