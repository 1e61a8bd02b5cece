"""test_writer_fork_then_exec.py -- with
MEMTOP_RECORD=rec.%p.dat, a fork child that allocates before exec records
into rec.<pid>.fork.dat (fork child, ended by the exec), and the image it
execs (same pid) still records into rec.<pid>.dat."""
import os
import subprocess

from test_writer_common import args, check, dump, env

a = args()
prog = os.path.join(a.progs, "writer_scenarios")
pattern = os.path.join(a.workdir, "rec.%p.dat")
r = subprocess.run([prog, "forkexec"], env=env(a, MEMTOP_RECORD=pattern), capture_output=True,
                   text=True, timeout=60)
check(r.returncode == 0 and "status 0" in r.stdout, "parent and child exit 0: %s" % r.stdout)
kid = int(r.stdout.split("child ")[1].split()[0])
fork_file = os.path.join(a.workdir, "rec.%d.fork.dat" % kid)
image_file = os.path.join(a.workdir, "rec.%d.dat" % kid)
check(os.path.exists(fork_file), "the fork child's own file: %s" % os.listdir(a.workdir))
fi, _, _ = dump(a, fork_file)
check(fi["process_flags"] & 2 == 2 and fi["end_reason"] == 3,
      "it is marked fork child and ends at the exec")
check(os.path.exists(image_file), "the exec'd image records into rec.<pid>.dat")
ii, _, _ = dump(a, image_file)
check(ii["process_flags"] == 0 and ii["end_reason"] == 2, "a fresh image, ended at its exit")
check(ii["allocs"] >= 500 and ii["frees"] >= 500, "with its events (%d allocs)" % ii["allocs"])
