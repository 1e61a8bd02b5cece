"""test_writer_exec_failure.py -- a failed exec must
not end the recording.  MEMTOP_RECORD records writer_scenarios
execfail, which calls execv on a missing program (ENOENT) and then makes
2000 more events: errno is intact, the file ends at the exit (END reason
exit, not exec) with a single final state, and it holds the events made
after the failed exec (replay == final for every trace)."""
import os
import subprocess

from test_writer_common import args, check, consistent, dump, env

a = args()
prog = os.path.join(a.progs, "writer_scenarios")
rec = os.path.join(a.workdir, "execfail.dat")
r = subprocess.run([prog, "execfail"], env=env(a, MEMTOP_RECORD=rec), capture_output=True,
                   text=True, timeout=60)
check(r.returncode == 0, "the target exits 0")
check("execv -1 errno 2" in r.stdout, "execv fails with errno ENOENT intact: %s" % r.stdout.strip())
info, rows, _ = dump(a, rec, traces=True)
check(info["finalized"] == 1 and info["end_reason"] == 2,
      "finalized at the exit (END reason %s, 2 = exit)" % info.get("end_reason"))
check(info.get("records_7", 0) == 1, "one state set (the final one): %s" % info.get("records_7"))
check(info["allocs"] >= 1100 and info["frees"] >= 1100,
      "the events after the failed exec are recorded (%d allocs, %d frees)"
      % (info["allocs"], info["frees"]))
check(consistent(info, rows) is None, "replay == final (%s)" % consistent(info, rows))
