#!/usr/bin/env python3
"""Pitfall 11: viewers misbehave; the target must not notice.

A preloaded target churns the heap until its stdin closes.  Meanwhile:
readers are SIGKILLed mid-read (mtp_segtool readloop, and `memtop -p PID
--batch` when the CLI exists); a viewer that holds the control lock with a
request posted is SIGKILLed; then random bytes are scribbled over the
control area many times.  The target must keep publishing, still answer a
PING from a well-behaved viewer after the dead lock holder (and, reported
only, after the garbage), and end normally with exit 0 and its usual
output, leaving no segment."""
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, wait_for  # noqa: E402



def read_pid(path):
    try:
        return int(open(path).read())
    except (OSError, ValueError):
        return None


def kill_mid_run(cmd, ready_line, secs):
    """Starts a viewer, waits for its ready line (if any), lets it run, then
    SIGKILLs it.  Returns whether it was still running when killed."""
    v = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if ready_line:
        v.stdout.readline()
    time.sleep(secs)
    alive = v.poll() is None
    v.kill()
    v.wait()
    return alive


def publish_count(t, seg):
    snap = t.segment_json(seg, quiet=True)
    return snap["publish_count"] if snap else -1


def check_publishing(t, seg, what):
    before = publish_count(t, seg)
    later = wait_for(lambda: publish_count(t, seg) > before, 10)
    t.check(later, "%s: the target stopped publishing (publish_count stuck at %d)"
            % (what, before))


def ping(t, seg):
    p = subprocess.run([t.segtool, "ping", seg], capture_output=True, text=True, timeout=30)
    return p.returncode == 0 and "pong" in p.stdout.lower(), p.stdout + p.stderr


def scribble(seg, layout, rounds):
    rng = random.Random(1234)
    off, size = layout["control_off"], layout["control_size"]
    with open(seg, "r+b") as f:
        for i in range(rounds):
            f.seek(off)
            f.write(bytes(rng.getrandbits(8) for _ in range(size)))
            if i % 2:  # make the garbage look like a pending request
                f.seek(layout["req_seq_off"])
                f.write(rng.getrandbits(64).to_bytes(8, "little"))
            f.flush()
            time.sleep(0.06)


def misbehave(t, seg, pid):
    for _ in range(3):
        t.check(kill_mid_run([t.segtool, "readloop", seg], True, 0.3),
                "segtool readloop ended by itself")
    check_publishing(t, seg, "after readers were killed mid-read")
    if t.memtop:
        for _ in range(2):
            kill_mid_run([t.memtop, "-p", str(pid), "--batch", "-d", "0.1"], False, 0.5)
        check_publishing(t, seg, "after memtop --batch was killed")
    t.check(kill_mid_run([t.segtool, "hold", seg], True, 0.2), "segtool hold ended early")
    ok, out = ping(t, seg)
    t.check(ok, "no PONG after a viewer died holding the control lock: " + out)
    layout = json.loads(subprocess.run([t.segtool, "layout"], capture_output=True,
                                       text=True).stdout)
    scribble(seg, layout, 30)
    check_publishing(t, seg, "after garbage in the control area")
    with open(seg, "r+b") as f:  # a viewer's lock recovery: only the lock word
        f.seek(layout["lock_off"])
        f.write(b"\0\0\0\0")
    ok, out = ping(t, seg)
    t.log("PING after the garbage (informational): %s" % ("answered" if ok else "no answer: " + out))


t = Test("viewer")
pidfile = t.path("target.pid")
cmd = [t.prog("pf_longrun"), pidfile]
plain = t.run_plain(cmd, input="")
if t.expect(plain, 0) and t.have_lib:
    shm = t.shm_dir()
    os.unlink(pidfile)
    target = t.popen_preloaded(cmd, shm, {"MEMTOP_INTERVAL_MS": "20"})
    pid = wait_for(lambda: read_pid(pidfile))
    seg = os.path.join(shm, "memtop-%s" % pid)
    if t.check(pid and wait_for(lambda: t.segment_json(seg, quiet=True)),
               "the target's segment %s never became readable" % seg):
        misbehave(t, seg, pid)
        t.check(target.poll() is None, "the target died while viewers misbehaved")
    out, err = target.communicate("", timeout=90)
    t.check(target.returncode == 0 and out == plain.out,
            "target: exit %d, stdout %r (want %r); stderr:\n%s"
            % (target.returncode, out, plain.out, err[-2000:]))
    t.check_no_segments(shm, "after the target exited")
t.finish()
