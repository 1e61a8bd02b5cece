#!/usr/bin/env python3
"""Edge cases of the hooks, one check each:
- _exit from a signal handler that interrupted a hook must not hang;
- threads whose first allocation happens inside pthread_setspecific of a
  key >= 32 must not leak memtop's or libunwind's per-thread state;
- a freed-and-reused address must not make a free "temporary";
- errno survives the first allocation of a fork child whose segment cannot
  be created;
- a header scribbled on by another process (a buggy viewer) must not steer
  where the target writes: it keeps its own copy of the layout."""
import os
import struct
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker, wait_for  # noqa: E402

t = Test("hook_edge_cases")

# 1. exit from a signal handler: 30 runs, timer phases spread over the loop.
sigexit = t.prog("pf_sigexit")
if t.expect(t.run_plain([sigexit, "3000"], timeout=10), 7) and t.have_lib:
    shm = t.shm_dir()
    hung = [u for u in range(2000, 2000 + 30 * 97, 97)
            if t.run_preloaded([sigexit, str(u)], shm, timeout=10).rc != 7]
    t.check(not hung, "_exit(7) from a signal handler: %d of 30 preloaded runs did not exit 7 "
            "(timer usec %s)" % (len(hung), hung[:5]))

# 2. pthread keys >= 32: bookkeeping stays small however many threads ran.
THREADS = 400
snap = t.run_all([t.prog("pf_tsd_keys"), str(THREADS)], 0)
if snap:
    tot = snap["totals"]
    # every worker's key destructor ran (its state given back): only the
    # main thread still counts
    t.check(tot["thread_count"] == 1,
            "thread_count %d after %d threads exited, expected 1" % (tot["thread_count"], THREADS))
    t.check(tot["tracker_bytes"] < 4 << 20,
            "tracker_bytes %d after %d threads: per-thread state leaks"
            % (tot["tracker_bytes"], THREADS))
    t.check(tot["rss_bytes"] < 32 << 20,
            "RSS %d after %d threads: per-thread state (libunwind's cache?) leaks"
            % (tot["rss_bytes"], THREADS))
    t.check_marker(snap, 4057, "worker malloc", alloc=THREADS, free=THREADS, live=0)

# 3. temporaries and a reused address (MEMTOP_TEMP_MS=0: only "newest" counts).
snap = t.run_all([t.prog("pf_temp_reuse")], 0, extra={"MEMTOP_TEMP_MS": "0"})
if snap:
    pq = marker(snap, 72)
    r = marker(snap, 88)
    t.check(pq["alloc_count"] == 2 and pq["free_count"] == 2,
            "p/q: alloc %d free %d, expected 2/2" % (pq["alloc_count"], pq["free_count"]))
    t.check(pq["temporary_count"] == 0,
            "q (p's address reused by another thread) counted temporary: %d"
            % pq["temporary_count"])
    t.check(r["temporary_count"] == 1, "r: temporary_count %d, expected 1"
            % r["temporary_count"])

# 4. errno in a fork child whose segment cannot be created.
errno_fork = t.prog("pf_errno_fork")
if t.expect(t.run_plain([errno_fork]), 0) and t.have_lib:
    res = t.run_preloaded([errno_fork], t.path("no-such-dir"))
    t.expect(res, 0)

# 5. a scribbled layout: slot offsets past the end of the file, defs_used at
# the end.  A target that believed them would fallocate (grow the file) and
# write outside its mapping.
def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


if t.have_lib:
    shm = t.shm_dir("shm-scribble")
    pidfile = t.path("longrun.pid")
    target = t.popen_preloaded([t.prog("pf_longrun"), pidfile], shm, {"MEMTOP_INTERVAL_MS": "20"})
    pid = wait_for(lambda: read_pid(pidfile))
    seg = os.path.join(shm, "memtop-%s" % pid)
    if t.check(pid and wait_for(lambda: os.path.exists(seg)), "the target made no segment"):
        lay = t.layout()
        size = os.path.getsize(seg)
        with open(seg, "r+b") as f:
            f.seek(lay["segment_bytes_off"])
            total = struct.unpack("<Q", f.read(8))[0]
            for i in range(lay["slots"]):
                f.seek(lay["slots_off"] + i * lay["slot_ref_size"] + lay["slot_ref_off_off"])
                f.write(struct.pack("<Q", total + (64 << 20)))
            f.seek(lay["defs_used_off"])
            f.write(struct.pack("<Q", total))
        time.sleep(0.6)  # about 30 publishes
        t.check(os.path.getsize(seg) == size,
                "the target followed the scribbled header: its segment grew from %d to %d bytes"
                % (size, os.path.getsize(seg)))
        t.check(target.poll() is None, "the target died after its header was scribbled on")
    out, err = target.communicate("", timeout=90)
    t.check(target.returncode == 0, "target: exit %d; stderr:\n%s"
            % (target.returncode, err[-2000:]))

t.finish()
