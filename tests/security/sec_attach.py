#!/usr/bin/env python3
"""sec_attach.py -- only the target's user and root can attach.

Why it exists: docs/security.md promises "Who may attach: the target's user
and root" (the segment is 0600).  User A runs a preloaded memtop-demo.  User
B's `memtop -p PID` -- a report, an export, a recording -- must each exit
non-zero with the one line "permission denied: run as the target's user or
root" on stderr, print nothing of A's heap and leave no file behind, and
nothing B tried may reach A's process (its recording status stays idle).
A's own `-p` and root's read the snapshot.  (Before this test the promise
had none; the attack table of docs/security.md now lists it.)
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, e2elib  # noqa: E402

PERM = "permission denied: "  # and who may: "... or root"


def reads(user, args, env, pid):
    """Whether user's `memtop -p PID --batch -n 1` shows the demo's heap."""
    p = seclib.run_as(user, [args.memtop, "-p", str(pid), "--batch", "-n", "1"], env)
    return p.returncode == 0 and "session_log_append" in p.stdout


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (owner, other):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        demo = seclib.start_demo(ctx, args, owner, shm, MEMTOP_LOG="info")
        try:
            e2elib.wait_for(lambda: reads(None, args, env, demo.pid), "root reads the demo")
            check(reads(owner, args, env, demo.pid), "the target's user cannot read it")
            out = os.path.join(other.home, "stolen")
            for what, opts in (("--batch", ["--batch", "-n", "1"]),
                               ("--export", ["--export", out + ".json"]),
                               ("--record", ["--record", out + ".dat"])):
                p = seclib.run_as(other, [args.memtop, "-p", str(demo.pid)] + opts, env)
                lines = p.stderr.strip().splitlines()
                # the owner named: after a setuid the process's user is not
                # the segment's, which is the one to run as
                check(p.returncode != 0 and len(lines) == 1 and PERM in lines[0] and
                      lines[0].endswith("or root") and
                      "belongs to uid %d" % owner.uid in lines[0],
                      "another user's %s: exit %d, stderr should be one line saying %r:\n%s"
                      % (what, p.returncode, PERM, p.stderr))
                check("session_log_append" not in p.stdout,
                      "another user's %s printed the target's heap:\n%s" % (what, p.stdout))
                print("ok: user B's -p %s: exit %d: %s" % (what, p.returncode, lines[-1:]))
            left = [n for n in os.listdir(other.home) if n.startswith("stolen")]
            check(not left, "another user's attempts left files: %s" % left)
            check(reads(None, args, env, demo.pid), "root cannot read it after the attempts")
        finally:
            demo.kill()
            _, err = demo.communicate(timeout=30)
        # MEMTOP_LOG=info: a recording session started in the target logs
        # "recording: ..." (record_session.c); B's --record must not reach it.
        check("recording:" not in err,
              "another user's --record reached the target:\n%s" % err[-2000:])


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
