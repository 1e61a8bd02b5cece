#!/usr/bin/env python3
"""sec_list_others.py -- another user's segments in --list say what they are.

Why it exists: a user's `memtop --list` showed every segment of root's as
"denied", the leftover of a root process killed long ago (kill -9) as much
as a running one, and so a segment of another PID namespace; the user was
told to "run as that user or root" to attach to something gone.  Root runs
two preloaded memtop-demo in a shared directory and kills one with SIGKILL
(its segment stays).  User A's --list must show the running one "denied"
(the segment "belongs to uid 0: run as that user or root"), and the dead
one "unknown", "another user's (uid 0) segment, and no process N here"
(ended or in another PID namespace, which A cannot tell apart without
reading it); root's --list shows that one stale.

A FIFO named as a segment, of uid 54321 (mode 0600: A may not open it),
of no process: A's --list says it is no memtop segment (not a regular
file), as it does for one A may open.  Before, the owner of a file that
was not a regular one was left 0, and the row said "another user's (uid
0) segment ... uid 0 or root removes it": root blamed for any user's
planted file.
"""

import os
import re
import signal
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, e2elib  # noqa: E402


def row(out, pid):
    rows = [ln for ln in out.splitlines() if re.match(r"\s*%d\s" % pid, ln)]
    check(len(rows) == 1, "expected one --list row for pid %d:\n%s" % (pid, out))
    return rows[0]


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 1) as (user,):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        live = seclib.start_demo(ctx, args, None, shm)
        dead = seclib.start_demo(ctx, args, None, shm)
        try:
            for d in (live, dead):
                seg = os.path.join(shm, "memtop-%d" % d.pid)
                e2elib.wait_for(lambda: os.path.exists(seg) and os.path.getsize(seg) > 0,
                                "the segment of root's demo %d" % d.pid)
            dead.send_signal(signal.SIGKILL)
            dead.wait()
            fake = 4190000 + os.getpid() % 1000  # a pid above pid_max's default: no process
            fifo = os.path.join(shm, "memtop-%d" % fake)
            os.mkfifo(fifo, 0o600)
            os.chown(fifo, 54321, 54321)
            p = seclib.run_as(user, [args.memtop, "--list"], env)
            check(p.returncode == 0, "user A's --list exited %d: %s" % (p.returncode, p.stderr))
            r = row(p.stdout, live.pid)
            check(re.search(r"\sdenied\s", r) and "belongs to uid 0: run as that user" in r,
                  "root's running demo, to user A: %r" % r)
            print("ok: running: %s" % r.strip())
            r = row(p.stdout, dead.pid)
            check(re.search(r"\sunknown\s", r) and "denied" not in r and
                  "another user's (uid 0) segment, and no process %d here" % dead.pid in r and
                  "another PID namespace" in r,
                  "root's killed demo, to user A: %r" % r)
            print("ok: killed: %s" % r.strip())
            r = row(p.stdout, fake)
            check("uid 0" not in r and "not a regular file" in r,
                  "a FIFO of uid 54321 named as a segment, to user A: %r" % r)
            print("ok: planted FIFO: %s" % r.strip())
            p = seclib.run_as(None, [args.memtop, "--list"], env)
            check(re.search(r"\sstale\s", row(p.stdout, dead.pid)),
                  "root's --list: the killed demo is not stale:\n%s" % p.stdout)
        finally:
            live.kill()
            live.wait()


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
