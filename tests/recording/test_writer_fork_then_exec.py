"""test_writer_fork_then_exec.py -- with
MEMTOP_RECORD=rec.%p.dat, a fork child that allocates before exec records
into rec.<pid>.fork.dat (fork child, ended by the exec), and the image it
execs (same pid) still records into rec.<pid>.dat.

Then the same 20 times with MEMTOP_TEST_LOADER_HOLD_US=2000, the fork 20 ms
after start: the parent's recording writer holds the loader's lock 2 ms in
each of its checks for new modules (every pass, ~5 ms apart when idle).  glibc does not reset that lock in a fork child:
before the loader gate (core_loader_gate.c) made fork wait for those holds,
a child forked in one waited for ever in its own recording's module map
(11 of 40 runs hung; this test hung once by chance)."""
import os
import signal
import subprocess

from test_writer_common import args, check, dump, env, fail

a = args()
prog = os.path.join(a.progs, "writer_scenarios")


def run_forkexec(workdir, nap_ms=0, **extra):
    """Runs `writer_scenarios forkexec NAP_MS` recording into workdir;
    returns the child's pid.  A run that has not ended in 60 s fails, its process group
    (the hung child too) killed."""
    pattern = os.path.join(workdir, "rec.%p.dat")
    p = subprocess.Popen([prog, "forkexec", str(nap_ms)], env=env(a, MEMTOP_RECORD=pattern, **extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        fail("forkexec %s: no end in 60 s (a fork child hung)" % extra)
    check(p.returncode == 0 and "status 0" in out, "parent and child exit 0: %s" % out.strip())
    return int(out.split("child ")[1].split()[0])


kid = run_forkexec(a.workdir)
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

for i in range(20):
    held = os.path.join(a.workdir, "hold-%d" % i)
    os.makedirs(held)
    kid = run_forkexec(held, 20, MEMTOP_TEST_LOADER_HOLD_US=2000)
    check(os.path.exists(os.path.join(held, "rec.%d.fork.dat" % kid)) and
          os.path.exists(os.path.join(held, "rec.%d.dat" % kid)),
          "run %d with 2 ms loader holds: the child's and its image's recordings" % i)
