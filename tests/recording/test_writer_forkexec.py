"""test_writer_forkexec.py -- recordings across threads, fork, vfork and
exec (MEMTOP_RECORD=rec-%p-%n.dat on writer_forkexec):
 - stage 1 (4 threads, 20000+ events) ends at exec with END reason exec,
   every event recorded, replay == final for every trace;
 - the fork child gets its own file (mid-run, FORK_CHILD flag, initial
   state), finalized at exit, and never writes its parent's file;
 - the vfork+exec child (/bin/true under the preload too) records its own
   file and leaves the parent's recording intact;
 - stage 2 (same pid after exec) gets the next %n, finalized by _exit;
 - every file is mode 0600."""
import os
import subprocess

from test_writer_common import args, check, consistent, dump, env

a = args()
prog = os.path.join(a.progs, "writer_forkexec")
pattern = os.path.join(a.workdir, "rec-%p-%n.dat")
r = subprocess.run([prog], env=env(a, MEMTOP_RECORD=pattern), capture_output=True, text=True,
                   timeout=120)
check(r.returncode == 0, "the workload succeeds under recording (rc %d, %s)"
      % (r.returncode, r.stderr.strip()[-300:]))
child = int(r.stdout.split()[1])
files = sorted(f for f in os.listdir(a.workdir) if f.endswith(".dat"))
print(files)
check(all((os.stat(os.path.join(a.workdir, f)).st_mode & 0o777) == 0o600 for f in files),
      "every recording is mode 0600")
infos = {f: dump(a, os.path.join(a.workdir, f), traces=True) for f in files}
main = [f for f in files if infos[f][0]["exe"].endswith("writer_forkexec") and
        infos[f][0]["pid"] != child]
kid = [f for f in files if infos[f][0]["pid"] == child]
check(len(main) == 2, "two files for the main pid (before and after exec): %s" % main)
check(len(kid) == 1, "one file for the fork child: %s" % kid)
first, second = sorted(main, key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
i1, rows1, _ = infos[first]
check(i1["finalized"] == 1 and i1["end_reason"] == 3, "stage 1 ends at exec (reason exec)")
check(i1["allocs"] + i1["lost_alloc"] >= 4 * 5000 + 4 and
      i1["frees"] + i1["lost_free"] >= 4 * 5000, "all thread events recorded or counted as "
      "lost (%d allocs, %d frees, %d lost)" % (i1["allocs"], i1["frees"], i1["end_dropped"]))
check(i1["reallocs"] + i1["lost_free"] >= 4, "realloc halves marked")
check(consistent(i1, rows1) is None, "stage 1: replay + lost == final (%s)" % consistent(i1, rows1))
i2, rows2, _ = infos[second]
check(i2["finalized"] == 1 and i2["end_reason"] == 2 and i2["pid"] == i1["pid"],
      "stage 2 (same pid, next %%n) finalized by _exit")
check(i2["allocs"] + i2["lost_alloc"] >= 200 and consistent(i2, rows2) is None,
      "stage 2 events recorded")
ik, rowsk, _ = infos[kid[0]]
check(ik["process_flags"] == 3, "the child's file is mid-run and marked fork child")
check(ik["finalized"] == 1 and ik["end_reason"] == 2, "the child's file is finalized at exit")
check(ik["allocs"] + ik["lost_alloc"] >= 300 and consistent(ik, rowsk) is None,
      "child: initial state + events == final")
check(i1["allocs"] + i1["lost_alloc"] < 4 * 5000 + 300,
      "the child's events are not in the parent's file")
others = [f for f in files if f not in main and f not in kid]
check(all(infos[f][0]["exe"].endswith("true") for f in others),
      "the only other file is /bin/true's own (%s)" % others)
