#!/usr/bin/env python3
"""sec_fifo.py -- a FIFO planted in the segment directory hangs nobody.

Why it exists: anyone can create memtop-<pid> in /dev/shm.  A FIFO there
(mkfifo -m 0444) used to make every other user's `memtop --list` block for
ever in open(O_RDONLY) after the O_RDWR open was refused.  User A plants
FIFOs under the name of a process of root's and of a pid with no process;
root's and user B's `--list` must return promptly and mark the entries, and
`memtop -p` of the pid must fail with a clear message instead of hanging.
"""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check  # noqa: E402

HANG_S = 20  # far above what a --list takes; a blocked open never returns


def row_of(out, pid):
    rows = [ln for ln in out.splitlines() if re.match(r"\s*%d\s" % pid, ln)]
    return rows[0] if len(rows) == 1 else None


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (attacker, other):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        victim = seclib.start_as(None, ["sleep", "300"], env)
        try:
            nobody = 4194301  # above any pid this test could meet: no such process
            for pid in (victim.pid, nobody):
                p = seclib.run_as(attacker, ["mkfifo", "-m", "0444",
                                             os.path.join(shm, "memtop-%d" % pid)], env)
                check(p.returncode == 0, "mkfifo as the attacker failed: %s" % p.stderr)
            for who, user in (("root", None), ("user B", other)):
                p = seclib.run_as(user, [args.memtop, "--list"], env, timeout=HANG_S)
                check(p.returncode == 0, "%s's --list failed:\n%s" % (who, p.stderr))
                for pid in (victim.pid, nobody):
                    row = row_of(p.stdout, pid)
                    check(row and "not a regular file" in row,
                          "%s's --list does not mark the FIFO memtop-%d as not a segment:\n%s"
                          % (who, pid, p.stdout))
                print("ok: %s's --list returned: %s" % (who, row_of(p.stdout, victim.pid)))
            for who, user in (("root", None), ("user B", other)):
                p = seclib.run_as(user, [args.memtop, "-p", str(victim.pid), "--batch", "-n",
                                         "1"], env, timeout=HANG_S)
                check(p.returncode != 0 and "not a regular file" in p.stderr,
                      "%s's memtop -p on a FIFO should fail with 'not a regular file' (exit "
                      "%d):\n%s%s" % (who, p.returncode, p.stdout, p.stderr))
                print("ok: %s's -p says: %s" % (who, p.stderr.strip()))
        finally:
            victim.kill()
            victim.wait()


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
