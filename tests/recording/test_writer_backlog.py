"""test_writer_backlog.py -- a thread's recording buffer grows while the
writer is behind, within its bound, and only past that bound are events
dropped, counted and shown (record_buffer.h: the drop policy).

The disk is slowed with MEMTOP_TEST_WRITE_DELAY_US (the writer sleeps
before each write to the file):

 - grows: 150,000 allocations (writer_random bulk: 225,000 events, fewer
   than a thread's bound of 262,144) while every write takes 200 ms: not
   one event may be dropped (before buffers grew, a thread's ring held
   8,192 events and a full ring waited 1 ms, then dropped), and the
   recording replays to its FINAL state;
 - bounded: 600,000 allocations (900,000 events) with writes of 1 s:
   events are dropped, and the file says so everywhere: END's and the
   LOST records' counts agree (dat_dump), `memtop -f --export` JSON has
   recording.events_dropped, the text export and --batch say "inexact";
   the recording still ends in the target's final state; the drops are
   for the cause "disk behind" (MEMTOP_LOG=info's last line: the disk
   slept in half of the last 2 s of writes and more), not only the hooks'
   wait cap; no hook waited much longer than that cap (1 s); and the process
   grew by less than the bound (8 MiB) plus the writer's own buffers
   over the same run without the delay (VmHWM).

Drops need a thread to make a bound's worth of events (262,144) while one
write lasts.  writer_random touches its heap first (no page fault per
allocation: ~0.1 s of CPU for those events), and the writes last 1 s (the
longest MEMTOP_TEST_WRITE_DELAY_US): the program needs a tenth of a core.
With writes of 300 ms and a page fault per allocation (~0.35 s of CPU),
a machine loaded with three busy loops beside the test made no drops in
3 runs out of 4."""
import json
import os
import re
import subprocess
import sys

from test_writer_common import args, check, dump

BOUND_KB = 8 * 1024  # 32 chunks of 8192 events of 32 bytes (record_buffer.h)
WRITER_SLACK_KB = 12 * 1024  # the writer: zstd, a frame's block map (more events a frame)
a = args()
prog = os.path.join(a.progs, "writer_random")


def record(name, n, delay_us):
    rec = os.path.join(a.workdir, name + ".dat")
    if os.path.exists(rec):
        os.unlink(rec)
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir, "MEMTOP_RECORD": rec,
              "MEMTOP_TEST_WRITE_DELAY_US": str(delay_us), "MEMTOP_LOG": "info"})
    p = subprocess.run([prog, "bulk", str(n)], env=e, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0 and os.path.exists(rec), "%s: ran and recorded" % name)
    m = re.search(r"hwm_kb=(\d+)", p.stdout)
    why = re.search(r"(\d+) events dropped \(disk behind (\d+), wait cap (\d+), could not wait "
                    r"(\d+), no buffer (\d+)\); longest hook wait ([0-9.]+) ms", p.stderr)
    check(why is not None, "%s: the drops by cause are logged" % name)
    print("%s: %s" % (name, why.group(0)))
    return rec, int(m.group(1)), why


def export(rec, fmt):
    out = rec + "." + fmt
    p = subprocess.run([a.memtop, "-f", rec, "--export", out], capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "memtop -f %s --export .%s exits 0 (%s)" % (os.path.basename(rec), fmt,
                                                                       p.stderr.strip()))
    return open(out).read(), p.stderr


rec, _, _ = record("grows", 150000, 200000)
info, _, _ = dump(a, rec)
check(info["end_dropped"] == 0 and info["lost_alloc"] == 0 and info["lost_free"] == 0,
      "grows: nothing dropped while the writer was behind (%d)" % info["end_dropped"])
text, err = export(rec, "json")
check(json.loads(text)["recording"]["events_dropped"] == 0 and "differ" not in err,
      "grows: the replay equals the final state")

_, hwm_fast, _ = record("fast", 600000, 0)
rec, hwm_slow, why = record("bounded", 600000, 1000000)
info, _, _ = dump(a, rec)
dropped = info["end_dropped"]
check(dropped > 0, "bounded: a disk that cannot keep up makes the writer drop (%d)" % dropped)
check(int(why.group(2)) > 0, "bounded: drops because the disk is behind (%s)" % why.group(2))
check(float(why.group(6)) < 1500, "bounded: no hook waited more than 1.5 s (%s ms)" % why.group(6))
check(info["lost_alloc"] + info["lost_free"] == dropped,
      "bounded: the LOST records count every drop (%d + %d)" % (info["lost_alloc"],
                                                               info["lost_free"]))
text, err = export(rec, "json")
snap = json.loads(text)
check(snap["recording"]["events_dropped"] == dropped, "bounded: the JSON export says %d dropped"
      % snap["recording"]["events_dropped"])
check("inexact" in err, "bounded: memtop -f says the recording is inexact")
t = snap["totals"]
check(t["alloc_count"] >= 600000 and t["free_count"] >= 300000,
      "bounded: the end is the target's final state (%d allocations)" % t["alloc_count"])
check(info["allocs"] + info["lost_alloc"] == t["alloc_count"]
      and info["frees"] + info["lost_free"] == t["free_count"],
      "bounded: written + dropped = made (%d + %d allocations, %d + %d frees)"
      % (info["allocs"], info["lost_alloc"], info["frees"], info["lost_free"]))
text, _ = export(rec, "txt")
check("inexact: %d events dropped" % dropped in text, "bounded: the text export says so")
p = subprocess.run([a.memtop, "-f", rec, "--batch"], capture_output=True, text=True, timeout=300)
check(p.returncode == 0 and "inexact" in p.stdout + p.stderr, "bounded: --batch says so")
grew = hwm_slow - hwm_fast
check(grew < BOUND_KB + WRITER_SLACK_KB,
      "bounded: the process grew by %d KiB over the same run without the delay (bound %d KiB)"
      % (grew, BOUND_KB))
print("all checks passed")
sys.exit(0)
