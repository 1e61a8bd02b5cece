"""test_writer_exec_race.py -- two threads exec at once while recording:
the first to enter exec fails while the second is still inside its own,
and the second then succeeds.  writer_scenarios execrace stages that order
every time with the exec spy (tests/pitfalls/progs/pf_exec_spy.c,
preloaded after libmemtop.so, path in MEMTOP_TEST_EXEC_SPY).  The first
exec sealed the file (final state and END); its failure must not unseal it
while the other exec may still replace the image: the file must end sealed,
END reason exec, with a single final state that matches the replay."""
import os
import subprocess

from test_writer_common import args, check, consistent, dump, env

a = args()
spy = os.environ.get("MEMTOP_TEST_EXEC_SPY", "")
check(os.path.exists(spy), "the exec spy is built: %r" % spy)
prog = os.path.join(a.progs, "writer_scenarios")
for i in range(3):
    rec = os.path.join(a.workdir, "race%d.dat" % i)
    e = env(a, MEMTOP_RECORD=rec)
    e["LD_PRELOAD"] = a.preload + ":" + spy
    r = subprocess.run([prog, "execrace"], env=e, capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "the second exec runs /bin/true (rc %d: %s)"
          % (r.returncode, r.stderr.strip()))
    info, rows, _ = dump(a, rec, traces=True)
    check(info.get("finalized") == 1 and info.get("end_reason") == 3,
          "run %d: the file ends sealed at the exec (finalized %s, END reason %s, 3 = exec)"
          % (i, info.get("finalized"), info.get("end_reason")))
    check(info.get("records_7", 0) == 1, "one final state: %s" % info.get("records_7"))
    check(info["allocs"] >= 500, "the events before the execs: %d allocs" % info["allocs"])
    check(consistent(info, rows) is None, "replay == final (%s)" % consistent(info, rows))
print("ok")
