#!/usr/bin/env python3
"""check_proctitle.py -- a renamed process's recording names it without padding.

Why it exists: servers rename themselves as setproctitle does (redis,
nginx, postgres): the title over argv's area, the rest NUL-padded, so that
/proc/PID/cmdline ends in NULs.  libmemtop.so turned every NUL into a
space, so a recording of redis said `pid 1942: redis-server *:16379` and
28 spaces (--batch, the JSON `cmdline`), and the replay viewer's header
spent its width on them and cut the rest with an ellipsis, while the live
views, which read /proc themselves, trimmed them.  proctitle renames itself
over 200 bytes of arguments; `memtop -p PID --record` records it; the
recording's JSON cmdline and --batch's first line must be the title alone.
"""

import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

TITLE = "proctitle: worker"


def record(args, ctx, pid, dat):
    """Records pid for a second with `memtop -p PID --record DAT`."""
    rec = subprocess.Popen([args.memtop, "-p", str(pid), "--record", dat], env=ctx.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        e2elib.wait_for(lambda: os.path.exists(dat) and os.path.getsize(dat) > 0 or
                        rec.poll() is not None, "the recording's first bytes")
        time.sleep(1.0)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=30)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    check(rec.returncode == 0, "memtop --record failed (exit %s):\n%s" % (rec.returncode, err))


def test(args):
    ctx = e2elib.Ctx(args)
    ready, dat = ctx.path("ready"), ctx.path("title.dat")
    target = e2elib.start_preloaded(ctx, [args.proctitle, ready, TITLE] + ["x" * 50] * 4)
    try:
        pid = int(e2elib.wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(),
                                  "the renamed target"))
        raw = open("/proc/%d/cmdline" % pid, "rb").read()
        check(raw.startswith(TITLE.encode() + b"\0\0"),
              "the target's /proc cmdline is not NUL-padded: %r" % raw[:80])
        record(args, ctx, pid, dat)
    finally:
        e2elib.stop(target)
    out = ctx.path("title.json")
    proc = e2elib.run([args.memtop, "-f", dat, "--export", out], ctx.env, timeout=60)
    check(proc.returncode == 0, "memtop -f --export failed:\n" + e2elib.describe(proc))
    cmd = e2elib.load_json(out)["cmdline"]
    check(cmd == TITLE, "the recording's JSON cmdline is %r, not %r" % (cmd, TITLE))
    proc = e2elib.run([args.memtop, "-f", dat, "--batch"], ctx.env, timeout=60)
    first = proc.stdout.splitlines()[0] if proc.stdout else ""
    check(proc.returncode == 0 and first.endswith("pid %d: %s" % (pid, TITLE)),
          "--batch's first line does not end with the title: %r\n%s" %
          (first, e2elib.describe(proc)))
    print("ok: the recording names pid %d %r" % (pid, cmd))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
