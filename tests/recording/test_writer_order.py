"""test_writer_order.py -- which order a recording keeps within a clock tick,
however it is started (MEMTOP_RECORD_ORDER, memtop --thread-order):

  - MEMTOP_RECORD from the start: tick order by default (format version 8,
    PROCESS order 1); MEMTOP_RECORD_ORDER=thread: version 6, order 0; a bad
    value: one warning, tick order;
  - memtop -p PID --record FILE: tick order; with --thread-order, the
    threads' order even when the target's environment says tick;
  - memtop --record FILE --thread-order -- PROG: the threads' order;
  - every one of them replays to its final state (dat_dump: replay ==
    FINAL for every trace), and says its order in --batch and the JSON.
Fails without the control channel's "thread-order " (memtop -p would record
in tick order) or without --thread-order."""
import json
import os
import subprocess
import time

from test_writer_common import args, check, dump, env, record_attached, start

a = args()
prog = os.path.join(a.progs, "writer_cull")
menv = dict(os.environ, MEMTOP_SHM_DIR=a.workdir)

def says(path, want_tick, what):
    """The file's version, PROCESS order, replay and what memtop says."""
    info, rows, _ = dump(a, path, traces=True)
    version, order = (8, 1) if want_tick else (6, 0)
    check(info["version"] == version and info["tick_order"] == order,
          "%s: version %d, order %d (%s, %s)" % (what, version, order, info["version"],
                                                 info["tick_order"]))
    bad = [r for r in rows if r[3] != r[4]]
    check(rows and not bad, "%s: every trace replays to its final state (%d traces, %d differ)" %
          (what, len(rows), len(bad)))
    b = subprocess.run([a.memtop, "-f", path, "--batch", "--no-symbols"], capture_output=True,
                       text=True, timeout=120)
    note = "each thread's events are sorted" in b.stdout
    check(b.returncode == 0 and note == want_tick, "%s: --batch says tick order: %s" % (what, note))
    out = path + ".json"
    e = subprocess.run([a.memtop, "-f", path, "--no-symbols", "--export", out],
                       capture_output=True, text=True, timeout=120)
    got = json.load(open(out))["recording"]["order"] if e.returncode == 0 else None
    check(got == ("tick" if want_tick else "thread"), "%s: JSON recording.order %s" % (what, got))


# 1. From the start, through the environment.
for value, want_tick, warn in ((None, True, False), ("thread", False, False),
                               ("tick", True, False), ("sideways", True, True)):
    path = os.path.join(a.workdir, "env-%s.dat" % value)
    extra = {"MEMTOP_RECORD": path}
    if value:
        extra["MEMTOP_RECORD_ORDER"] = value
    r = subprocess.run([prog, "mix"], env=env(a, **extra), capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "MEMTOP_RECORD_ORDER=%s: the target runs" % value)
    warned = r.stderr.count("MEMTOP_RECORD_ORDER=")
    check(warned == (1 if warn else 0), "MEMTOP_RECORD_ORDER=%s: %d warnings" % (value, warned))
    says(path, want_tick, "MEMTOP_RECORD_ORDER=%s" % value)


# 2. memtop -p PID --record, with and without --thread-order, on a target
# whose environment says tick.
def attach(extra, name):
    t = start([prog, "forever"], env=env(a, MEMTOP_RECORD_ORDER="tick"))
    time.sleep(1.0)
    path = os.path.join(a.workdir, name)
    rc, _, err = record_attached(a, t.pid, path, extra)
    t.kill()
    t.wait()
    check(rc == 0, "memtop -p --record %s: exits 0 (%s)" % (extra, err.strip()[-200:]))
    return path


says(attach([], "attach-tick.dat"), True, "memtop -p --record")
says(attach(["--thread-order"], "attach-thread.dat"), False, "memtop -p --record --thread-order")

# 3. memtop --record FILE --thread-order -- PROG (the program records itself).
path = os.path.join(a.workdir, "launch-thread.dat")
r = subprocess.run([a.memtop, "--record", path, "--thread-order", "--batch", "--no-symbols", "--",
                    prog, "mix"], env=dict(menv, MEMTOP_LIBRARY=a.preload), capture_output=True,
                   text=True, timeout=120)
check(r.returncode == 0 and os.path.exists(path), "memtop --record --thread-order -- PROG: ran "
      "(%s)" % r.stderr.strip()[-200:])
says(path, False, "memtop --record --thread-order -- PROG")

# 4. Not for reading.
r = subprocess.run([a.memtop, "-f", path, "--thread-order", "--batch"], capture_output=True,
                   text=True, timeout=60)
check(r.returncode != 0 and "--thread-order is for recording" in r.stderr,
      "memtop -f --thread-order: a usage error (%d)" % r.returncode)
