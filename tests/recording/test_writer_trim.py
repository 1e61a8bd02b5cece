"""test_writer_trim.py -- a recording that stops gives back the pages of the
chunk each recording thread appended to.  The chunk stays mapped (only its
thread may let it go), but its pages go back to the kernel, all but its
header's and the one or two an append in flight may still write: 16 busy
threads (writer_busy) hold ~4.1 MiB more resident memory after a recording
without that (16 x 260 KiB), under 1 MiB with it.  The target's anonymous
resident memory (RssAnon) is read before a recording and after it stops;
the threads keep allocating, a few live blocks each.  A second recording
then writes into the zero-filled pages again: it must be whole and replay to
its final state, as the first."""
import os
import time

from test_writer_common import (args, check, consistent, dump, env, record_attached, start,
                                wait_segment)

THREADS = 16
a = args()
t = start([os.path.join(a.progs, "writer_busy"), str(THREADS), "60"], env=env(a),
          stdout=open(os.devnull, "w"))
wait_segment(a, t.pid)
time.sleep(1.0)  # past the first allocations' growth of the tables


def rss_anon():
    with open("/proc/%d/status" % t.pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) << 10
    check(False, "RssAnon in /proc/%d/status" % t.pid)


for i in range(2):
    before = rss_anon()
    path = os.path.join(a.workdir, "trim%d.dat" % i)
    rc, _, err = record_attached(a, t.pid, path, seconds=2.0)
    check(rc == 0, "recording %d made: %s" % (i, err.strip()[-200:]))
    time.sleep(0.5)  # the writer's release after the stop
    grew = rss_anon() - before
    info, rows, _ = dump(a, path, traces=True)
    check(info["finalized"] == 1 and info["truncated"] == 0 and info["allocs"] > THREADS * 1000,
          "recording %d whole, every thread in it (%d allocations)" % (i, info["allocs"]))
    bad = consistent(info, rows)
    check(bad is None, "recording %d replays to its final state: %s" % (i, bad))
    check(grew < 1 << 20,
          "after recording %d the target holds %d bytes more resident memory (at most 1 MiB; "
          "the %d threads' chunks, 4.1 MiB, went back)" % (i, grew, THREADS))
t.kill()
t.wait()
