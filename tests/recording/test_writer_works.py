"""test_writer_works.py -- a hook at its buffer's bound waits longer for a
recording writer that works than for one that sleeps (record_buffer.c's
wait_capped, record_disk.c's mt_recw_worked).

On a loaded machine the writer thread is runnable but waits for a core;
the 1 s cap alone then dropped a few events of 82 M at 16 threads beside
two CPU hogs although the disk kept up.  Now a hook drops at 1 s only if
the writer slept over the last half second (schedstat: less than half of
it running or waiting for a core), and waits up to 5 s for one that works.

writer_random bulk (one thread, past its bound of 262,144 events) is
recorded while the writer thread is held after each pass:

 - works: it spins 1.5 s (MEMTOP_TEST_WRITER_SPIN_MS), pinned to one CPU
   with two busy loops, so that it runs a third of the time and waits for
   the core the rest (a policy that counted only its CPU time would drop
   at 1 s): nothing dropped, some hook waited past 1.1 s, and the
   recording replays to the final state;
 - works too long: it spins 6 s each pass: drops, every one "writer
   stalled" (JSON key writer_starved), after waits of about 5 s;
 - sleeps: it sleeps 2 s (MEMTOP_TEST_WRITER_STALL_MS): drops after the
   1 s cap, no hook waits 1.5 s.
"""
import json
import os
import re
import subprocess
import sys
import time

from test_writer_common import args, check, dump

a = args()
prog = os.path.join(a.progs, "writer_random")
CPUS = sorted(os.sched_getaffinity(0))
WRITER_CPU = CPUS[0]
TARGET_CPUS = set(CPUS[1:]) or {CPUS[0]}


def writer_tid(pid, timeout=20.0):
    """The tid of pid's recording writer thread (comm memtop-record)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    if f.read().strip() == "memtop-record":
                        return int(tid)
            except OSError:
                pass
        time.sleep(0.01)
    return 0


def hog():
    return subprocess.Popen(["sh", "-c", "while :; do :; done"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {WRITER_CPU}))


def record(name, n, knobs, hogs=0):
    """Records `writer_random bulk n` with the knobs; with hogs, the writer
    thread shares its CPU with that many busy loops.  Returns the file and
    the log's drop line (MEMTOP_LOG=info)."""
    rec = os.path.join(a.workdir, name + ".dat")
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir, "MEMTOP_RECORD": rec,
              "MEMTOP_LOG": "info"})
    e.update(knobs)
    p = subprocess.Popen([prog, "bulk", str(n)], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, TARGET_CPUS))
    busy = []
    if hogs:
        tid = writer_tid(p.pid)
        check(tid > 0, "%s: the writer thread is there" % name)
        os.sched_setaffinity(tid, {WRITER_CPU})
        busy = [hog() for _ in range(hogs)]
    try:
        _, err = p.communicate(timeout=300)
    finally:
        for h in busy:
            h.kill()
            h.wait()
    check(p.returncode == 0 and os.path.exists(rec), "%s: ran and recorded" % name)
    why = re.search(r"(\d+) events dropped \(disk behind (\d+), wait cap (\d+), could not wait "
                    r"(\d+), no buffer (\d+)\); longest hook wait ([0-9.]+) ms", err)
    check(why is not None, "%s: the drops by cause are logged" % name)
    print("%s: %s" % (name, why.group(0)))
    return rec, int(why.group(1)), int(why.group(3)), float(why.group(6))


def export_json(rec):
    out = rec + ".json"
    p = subprocess.run([a.memtop, "-f", rec, "--export", out], capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "memtop -f %s --export exits 0 (%s)" % (rec, p.stderr.strip()))
    return json.load(open(out)), p.stderr


# 200,000 allocations and 100,000 frees: 38,000 events past the bound, so
# the hook waits for the writer several times.
rec, dropped, cap, longest = record("works", 200000, {"MEMTOP_TEST_WRITER_SPIN_MS": "1500"}, hogs=2)
info, _, _ = dump(a, rec)
check(dropped == 0 and info["end_dropped"] == 0 and info["lost_alloc"] + info["lost_free"] == 0,
      "works: nothing dropped while the writer worked (%d, file %d)" % (dropped, info["end_dropped"]))
check(longest > 1100, "works: a hook waited past the sleeping writer's 1 s cap (%.1f ms)" % longest)
check(longest < 5300, "works: no hook waited past 5 s (%.1f ms)" % longest)
snap, err = export_json(rec)
check(snap["recording"]["events_dropped"] == 0 and "differ" not in err and "inexact" not in err,
      "works: the recording is exact and replays to the final state")

# 190,000 and 95,000: 285,000 events, past the bound and the chunk (8,192)
# the writer's first pass may take before it spins 6 s a pass.
rec, dropped, cap, longest = record("too_long", 190000, {"MEMTOP_TEST_WRITER_SPIN_MS": "6000"})
info, _, _ = dump(a, rec)
check(dropped > 0 and cap == dropped and info["end_dropped"] == dropped
      and info.get("lost_why_1", 0) == dropped,
      "too_long: every drop (%d) is the wait cap's, in the log and the file" % dropped)
check(4900 < longest < 6500, "too_long: the hooks gave up after 5 s (%.1f ms)" % longest)
snap, err = export_json(rec)
check(snap["recording"]["dropped_by_cause"]["writer_starved"] == dropped,
      "too_long: the JSON export's writer_starved (%s)" % snap["recording"]["dropped_by_cause"])
words = "%d event%s dropped: writer stalled (wait cap) %d" % (dropped, "s" * (dropped > 1), dropped)
check(words in err, "too_long: memtop -f names the cause (%r in %r)" % (words, err))

rec, dropped, cap, longest = record("sleeps", 190000, {"MEMTOP_TEST_WRITER_STALL_MS": "2000"})
check(dropped > 0 and cap == dropped, "sleeps: the wait cap dropped events (%d)" % dropped)
check(longest < 1500, "sleeps: no hook waited 1.5 s for a writer asleep (%.1f ms)" % longest)
print("all checks passed")
sys.exit(0)
