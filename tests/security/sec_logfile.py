#!/usr/bin/env python3
"""sec_logfile.py -- a planted MEMTOP_LOG_FILE neither hangs the target nor is followed.

Why it exists: MEMTOP_LOG_FILE may name a file in a shared directory such
as /tmp.  The library used to open it O_WRONLY|O_CREAT|O_APPEND: a FIFO
planted there by user A made user B's process block at start-up for ever,
and a planted symbolic link made B's process append its log to whatever
file of B's the link pointed to.  With the kernel's protected_fifos and
protected_symlinks off (as on many systems), B's preloaded memtop-demo must
run to its end, leave the link's target untouched, and log to stderr why
the file was refused.  Likewise with protected_hardlinks off, a hard link
that A makes to a file of B's (the file is B's own, so only its link count
tells) is refused.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check  # noqa: E402

HANG_S = 30  # memtop-demo 1 takes about a second


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (attacker, victim), \
            seclib.sysctl("/proc/sys/fs/protected_fifos", 0), \
            seclib.sysctl("/proc/sys/fs/protected_symlinks", 0), \
            seclib.sysctl("/proc/sys/fs/protected_hardlinks", 0):
        shared = seclib.shared_dir(ctx, "tmp")
        precious = os.path.join(victim.home, "precious")
        p = seclib.run_as(victim, ["sh", "-c", 'printf keep > "$0"', precious], ctx.env)
        check(p.returncode == 0, "cannot write B's file: %s" % p.stderr)
        reachable = os.path.join(shared, "b-precious")  # B's, where A can name it
        p = seclib.run_as(victim, ["sh", "-c", 'printf keep > "$0"', reachable], ctx.env)
        check(p.returncode == 0, "cannot write B's file: %s" % p.stderr)
        fifo, link = os.path.join(shared, "fifo.log"), os.path.join(shared, "link.log")
        hard = os.path.join(shared, "hard.log")
        for cmd in (["mkfifo", "-m", "0666", fifo], ["ln", "-s", precious, link],
                    ["ln", reachable, hard]):
            p = seclib.run_as(attacker, cmd, ctx.env)
            check(p.returncode == 0, "the attacker's %s failed: %s" % (cmd[0], p.stderr))
        for planted in (fifo, link, hard):
            env = ctx.env_with(LD_PRELOAD=args.preload, MEMTOP_LOG_FILE=planted,
                               MEMTOP_LOG="info")
            p = seclib.run_as(victim, [args.demo, "1"], env, timeout=HANG_S)
            check(p.returncode == 0, "B's demo failed with MEMTOP_LOG_FILE=%s (exit %d):\n%s" %
                  (planted, p.returncode, p.stderr))
            check("cannot open MEMTOP_LOG_FILE" in p.stderr,
                  "B's demo did not say why %s was refused:\n%s" % (planted, p.stderr))
            print("ok: %s" % p.stderr.strip().splitlines()[0])
        for target in (precious, reachable):
            with open(target) as f:
                check(f.read() == "keep", "B's process wrote its log through A's link into %s" %
                      target)
        print("ok: the links' targets are untouched")


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
