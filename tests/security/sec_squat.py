#!/usr/bin/env python3
"""sec_squat.py -- pre-creating a segment's name does not hide another user's process.

Why it exists: segment names used to be predictable (memtop-<pid>, and
.memtop-<pid>.new while it is built): user A could create both before user
B's process started and make it invisible to memtop, with a message naming
the wrong file.  Here B's process is a shell that waits until A has squatted
both names for its pid, then execs a preloaded memtop-demo (same pid).  B's
`memtop --list` and `memtop -p` must still see it, root's too, and B's log
must say which file was in the way.  Then `--clean` removes B's stale file
when B runs it, and neither A's files (as B) nor B's (as root).
"""

import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check  # noqa: E402

WAIT = 'while [ ! -e "$0" ]; do sleep 0.05; done; exec env LD_PRELOAD="$1" "$2" 300'


def row_of(out, pid):
    rows = [ln for ln in out.splitlines() if re.match(r"\s*%d\s" % pid, ln)]
    return rows[0] if len(rows) == 1 else None


def listed_running(user, memtop, env, pid):
    p = seclib.run_as(user, [memtop, "--list"], env)
    row = row_of(p.stdout, pid)
    return row if row and "running" in row and "memtop-demo" in row else None


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (squatter, victim):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        go = ctx.path("go")
        proc = seclib.start_as(victim, ["sh", "-c", WAIT, go, args.preload, args.demo], env)
        try:
            pid = proc.pid
            squat = [os.path.join(shm, n % pid) for n in ("memtop-%d", ".memtop-%d.new")]
            for path in squat:
                p = seclib.run_as(squatter, ["sh", "-c", 'printf junk > "$0"', path], env)
                check(p.returncode == 0, "squatting %s failed: %s" % (path, p.stderr))
            open(go, "w").close()  # B's shell may exec now

            row = seclib.e2elib.wait_for(lambda: listed_running(victim, args.memtop, env, pid),
                                         "B's --list to show B's squatted process %d" % pid,
                                         timeout=30)
            print("ok: B's --list: %s" % row.strip())
            check(listed_running(None, args.memtop, env, pid),
                  "root's --list does not show B's process %d as running" % pid)
            p = seclib.run_as(victim, [args.memtop, "-p", str(pid), "--batch", "-n", "1"], env)
            check(p.returncode == 0 and "memtop-demo" in p.stdout,
                  "B's memtop -p %d failed (exit %d):\n%s%s" % (pid, p.returncode, p.stdout,
                                                                p.stderr))
            print("ok: B's -p %d works" % pid)
            mine = [n for n in os.listdir(shm) if n.startswith("memtop-%d-" % pid)]
            check(len(mine) == 1 and os.stat(os.path.join(shm, mine[0])).st_uid == victim.uid,
                  "expected one file memtop-%d-<suffix> of B's in %s: %s" %
                  (pid, shm, sorted(os.listdir(shm))))

            proc.send_signal(signal.SIGKILL)  # leaves B's segment behind, stale
            _, err = proc.communicate(timeout=30)
            want = "%s is in the way (owned by uid %d" % (squat[0], squatter.uid)
            check(want in err, "B's log does not say which file was in the way (%r):\n%s" %
                  (want, err))
            print("ok: B's log: %s" % err.strip().splitlines()[0])

            seclib.run_as(None, [args.memtop, "--clean"], env)
            check(os.path.exists(os.path.join(shm, mine[0])),
                  "root's --clean removed B's stale segment")
            p = seclib.run_as(victim, [args.memtop, "--clean"], env)
            left = sorted(os.listdir(shm))
            check(mine[0] not in left and all(os.path.exists(s) for s in squat),
                  "B's --clean should remove B's own stale segment and nothing of A's: %s\n%s"
                  % (left, p.stdout + p.stderr))
            print("ok: --clean removes only the caller's own files")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
