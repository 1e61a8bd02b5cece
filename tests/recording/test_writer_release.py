"""test_writer_release.py -- a recording that stops gives the target its
memory back.  memtop's own memory in the target (tracker_bytes, as the
viewer and the exports show it) is read before a recording starts and after
it stops, for a recording in tick order, a culled one and one in thread
order, one after the other in the same target: after each, the writer's
buffers, zstd context, frame context, sort scratch and cull FIFO are gone
(~10 MiB before this test existed, ~20 MiB while a culled session's FIFO
stayed), and so are the rings' spare chunks.  What may stay: the chunk the
target's one allocating thread appends to (256 KiB mapped, which
tracker_bytes counts: only that thread may let it go; its pages go back,
test_writer_trim.py) and the slab of ring headers (64 KiB).  Each recording must still be
whole (finalized) and replay to its final state, so the next session set
its memory up again."""
import json
import os
import subprocess
import time

from test_writer_common import (args, check, consistent, dump, env, record_attached, start,
                                wait_segment)

a = args()
prog = os.path.join(a.progs, "writer_cull")
t = start([prog, "busy"], env=env(a))
wait_segment(a, t.pid)
time.sleep(0.5)  # past the first allocations' growth of the tables
STAYS = 448 << 10  # a ring's chunk, the headers' slab, and room


def tracker_bytes():
    path = os.path.join(a.workdir, "now.json")
    if os.path.exists(path):
        os.unlink(path)
    r = subprocess.run([a.memtop, "-p", str(t.pid), "--export", path], capture_output=True,
                       text=True, timeout=60, env=dict(os.environ, MEMTOP_SHM_DIR=a.workdir))
    check(r.returncode == 0, "export of the target's state: %s" % r.stderr.strip()[-200:])
    return json.load(open(path))["totals"]["tracker_bytes"]


before = tracker_bytes()
for i, extra in enumerate([[], ["--cull=1"], ["--thread-order"]]):
    path = os.path.join(a.workdir, "r%d.dat" % i)
    rc, _, err = record_attached(a, t.pid, path, extra, seconds=2.0)
    check(rc == 0, "recording %d %s made: %s" % (i, extra, err.strip()[-200:]))
    info, rows, _ = dump(a, path, traces=True)
    check(info["finalized"] == 1 and info["truncated"] == 0,
          "recording %d %s whole (%d bytes)" % (i, extra, os.path.getsize(path)))
    bad = consistent(info, rows)
    check(bad is None, "recording %d %s replays to its final state: %s" % (i, extra, bad))
    after = tracker_bytes()
    check(after - before <= STAYS,
          "after recording %d %s memtop holds %d bytes in the target, %d before (at most %d "
          "more may stay)" % (i, extra, after, before, STAYS))
t.kill()
t.wait()
