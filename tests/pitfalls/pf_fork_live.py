#!/usr/bin/env python3
"""Pitfall 4b: a forked child that keeps running has its own segment
(memtop-<childpid>, flagged as a fork child, counting its own allocations)
while it is alive; all segments are gone after both exit cleanly."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker, segments, wait_for  # noqa: E402



def read_pids(path):
    try:
        parent, child = open(path).read().split()
        return int(parent), int(child)
    except (OSError, ValueError):
        return None


def check_child_segment(t, shm, parent, child):
    seg = os.path.join(shm, "memtop-%d" % child)
    snap = wait_for(lambda: t.segment_json(seg, quiet=True))
    if not t.check(snap is not None, "no readable segment %s for the running child "
                   "(present: %s)" % (seg, segments(shm))):
        return
    t.check(snap["pid"] == child, "child segment pid %s != %d" % (snap["pid"], child))
    t.check(snap.get("fork_child") is True, "child segment lacks MT_FLAG_FORK_CHILD")
    t.check(snap.get("ppid") == parent, "child segment ppid %s != %d" % (snap.get("ppid"), parent))
    t.check(snap.get("exited") is not True, "running child's segment is marked exited")
    kept = wait_for(lambda: marker(t.segment_json(seg, quiet=True), 1021)["live_count"] >= 10, 10)
    t.check(kept, "the child's 10 live 1021-byte blocks never showed in its segment")
    # The parent's publisher creates its segment MEMTOP_START_MS after its
    # start, on its own schedule: under load that can come after the child's.
    parent_seg = os.path.join(shm, "memtop-%d" % parent)
    t.check(wait_for(lambda: os.path.exists(parent_seg)), "the waiting parent has no segment")


t = Test("fork_live")
pidfile = t.path("pids.txt")
cmd = [t.prog("pf_fork_live"), pidfile]
plain = t.run_plain(cmd, input="")
if t.expect(plain, 0) and t.have_lib:
    shm = t.shm_dir()
    os.unlink(pidfile)
    p = t.popen_preloaded(cmd, shm, {"MEMTOP_INTERVAL_MS": "20"})
    pids = wait_for(lambda: read_pids(pidfile))
    if t.check(pids is not None, "the child never wrote its pid"):
        check_child_segment(t, shm, *pids)
    out, err = p.communicate("x\n", timeout=60)
    t.check(p.returncode == 0 and out == plain.out,
            "preloaded run: exit %d, stdout %r (want %r); stderr:\n%s"
            % (p.returncode, out, plain.out, err[-2000:]))
    t.check_no_segments(shm, "after the parent and child exited")
t.finish()
