"""test_writer_diskfull.py -- a recording cut by a full disk says so.

A 1 MiB tmpfs in a mount namespace of its own (unshare -m; needs root, as
CI runs) is filled by the recording of writer_fill (allocations whose
events compress poorly; it runs until its segment says the recording
failed, at most 60 s).  The target runs on and exits 0.  Asserts:
  - MEMTOP_RECORD: the file ends with END(ERROR, ENOSPC) after its last
    complete frame (finalized, no truncated tail: the writer kept room for
    END and wrote it over the partly written frame);
  - `memtop -f FILE --batch` says "stopped: disk full" and warns that the
    disk was full (ENOSPC), never "not finalized";
  - `memtop -f FILE --export X.json`: recording.end_reason "disk_full",
    finalized true;
  - `memtop -p PID --record FILE` on a running target: fails (exit 1) with
    the target's status "disk full: No space left on device (ENOSPC)", and
    its file is finalized the same way; the failed session's memory is given
    back (no stop follows a failure): memtop's own memory in the target
    (tracker_bytes) after it is within 448 KiB of what it was before (a
    ring's chunk stays, test_writer_release.py; ~10 MiB stayed)."""
import errno
import json
import os
import shlex
import subprocess
import sys

from test_writer_common import args, check, dump, fail

a = args()
if os.geteuid() != 0:
    fail("needs root (a tmpfs mounted in a mount namespace of its own); CI runs as root")
fill = os.path.join(a.progs, "writer_fill")
mnt = os.path.join(a.workdir, "mnt")
shm = os.path.join(a.workdir, "shm")
os.makedirs(mnt)
os.makedirs(shm, mode=0o700)


def in_small_fs(script):
    """Runs the shell script with a fresh 1 MiB tmpfs mounted at mnt (only
    this process tree sees it); the script copies what it wants out.  Where
    a mount namespace cannot be private (a chroot whose root is no mount
    point), the tmpfs is mounted here for the script and unmounted after."""
    sh = "mount -t tmpfs -o size=1m,mode=0755 memtop-full %s && %s" % (shlex.quote(mnt), script)
    env = dict(os.environ, MEMTOP_SHM_DIR=shm)
    env.pop("MEMTOP_RECORD", None)
    env.pop("LD_PRELOAD", None)
    r = subprocess.run(["unshare", "-m", "sh", "-c", sh], env=env, capture_output=True,
                       text=True, timeout=90)
    if "cannot change root filesystem propagation" not in r.stderr:
        return r
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "memtop-full", mnt],
                   check=True)
    try:
        return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True,
                              timeout=90)
    finally:
        subprocess.run(["umount", mnt])


def check_file(path, what):
    info, _, _ = dump(a, path)
    print("%s: %d bytes, %d frames, finalized %d, end_reason %d, end_error %d" %
          (what, os.path.getsize(path), info["frames"], info["finalized"], info["end_reason"],
           info["end_error"]))
    check(info["truncated"] == 0 and info["tail_bytes"] == 0,
          "%s: no partial frame after the last complete one" % what)
    check(info["finalized"] == 1 and info["end_reason"] == 4 and
          info["end_error"] == errno.ENOSPC,
          "%s: END(ERROR, ENOSPC) closes the file (finalized %d, reason %d, error %d)" %
          (what, info["finalized"], info["end_reason"], info["end_error"]))


def check_reader(path, what):
    r = subprocess.run([a.memtop, "-f", path, "--batch"], capture_output=True, text=True,
                       timeout=60)
    print(r.stderr.strip())
    check(r.returncode == 0, "%s: memtop -f --batch exits 0 (%d)" % (what, r.returncode))
    check("stopped: disk full" in r.stdout, "%s: the summary says 'stopped: disk full'" % what)
    check("disk was full (No space left on device, ENOSPC)" in r.stderr,
          "%s: the warning says the disk was full (ENOSPC)" % what)
    check("not finalized" not in r.stdout + r.stderr, "%s: never 'not finalized'" % what)
    out = os.path.join(a.workdir, os.path.basename(path) + ".json")
    r = subprocess.run([a.memtop, "-f", path, "--export", out], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, "%s: memtop -f --export exits 0" % what)
    with open(out) as f:
        rec = json.load(f)["recording"]
    check(rec["finalized"] is True and rec["end_reason"] == "disk_full",
          "%s: JSON recording.end_reason is 'disk_full' (%r, finalized %r)" %
          (what, rec["end_reason"], rec["finalized"]))


# MEMTOP_RECORD from the start.
saved = os.path.join(a.workdir, "env.dat")
r = in_small_fs("LD_PRELOAD=%s MEMTOP_RECORD=%s/full.dat %s 60; rc=$?; cp %s/full.dat %s; "
                "exit $rc" % (shlex.quote(a.preload), shlex.quote(mnt), shlex.quote(fill),
                              shlex.quote(mnt), shlex.quote(saved)))
print(r.stdout.strip(), r.stderr.strip())
check(r.returncode == 0 and "fill done" in r.stdout, "the target runs on and exits 0")
check("failed 1" in r.stdout, "its segment says the recording failed")
check("No space left on device" in r.stderr, "the target warns once of the full disk")
check_file(saved, "MEMTOP_RECORD")
check_reader(saved, "MEMTOP_RECORD")

# memtop -p PID --record on a running target, memtop's memory in it read
# before and after (the target runs 10 s past the failure; memtop is killed
# with it if it still runs).
saved = os.path.join(a.workdir, "live.dat")
before, after = os.path.join(a.workdir, "before.json"), os.path.join(a.workdir, "after.json")
r = in_small_fs(
    "LD_PRELOAD=%s %s 60 10 >/dev/null & pid=$!; "
    "while [ ! -s %s/memtop-$pid ]; do sleep 0.05; done; sleep 0.5; "
    "%s -p $pid --export %s >/dev/null 2>&1; "
    "%s -p $pid --record %s/live.dat; rc=$?; "
    "%s -p $pid --export %s >/dev/null 2>&1; kill $pid; wait $pid; cp %s/live.dat %s; exit $rc" %
    (shlex.quote(a.preload), shlex.quote(fill), shlex.quote(shm), shlex.quote(a.memtop),
     shlex.quote(before), shlex.quote(a.memtop), shlex.quote(mnt), shlex.quote(a.memtop),
     shlex.quote(after), shlex.quote(mnt), shlex.quote(saved)))
print(r.stderr.strip().splitlines()[-3:])
check(r.returncode == 1, "--record exits 1 when the recording fails (%d)" % r.returncode)
check("the recording failed: disk full: No space left on device (ENOSPC)" in r.stderr,
      "--record says the disk was full: %s" % r.stderr.strip().splitlines()[-1:])
check_file(saved, "--record")
check_reader(saved, "--record")
mem = [json.load(open(p))["totals"]["tracker_bytes"] for p in (before, after)]
check(mem[1] - mem[0] <= 448 << 10,
      "the failed session gave its memory back: memtop holds %d bytes in the target, %d before"
      % (mem[1], mem[0]))
sys.exit(0)
