#!/usr/bin/env python3
"""check_full_shm.py -- a full /dev/shm is reported once and shown with its reason.

Why it exists: with a full /dev/shm the target printed "cannot grow segment
... No space left on device" at every publish (35 times in 17 s) and the
viewer only said "no snapshot published yet".  Runs memtop-demo in a mount
namespace whose MEMTOP_SHM_DIR is a 16 KiB tmpfs (root; skipped otherwise):
the target's stderr has the warning once, and `memtop -p PID --batch` (from
the host, through /proc/PID/root) and --list say "cannot grow its segment:
No space left on device".
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

REASON = "cannot grow its segment: No space left on device"


def test(args):
    e2elib.skip_unless_root()
    ctx = e2elib.Ctx(args)
    proc, pid = e2elib.start_in_namespaces(ctx, [args.demo, "120"], pid_ns=False, size="16k")
    try:
        batch = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env,
                           timeout=60)
        check(batch.returncode != 0 and REASON in batch.stderr,
              "memtop -p %d does not say why there is no snapshot:\n%s" %
              (pid, e2elib.describe(batch)))
        env = ctx.env_with(MEMTOP_SHM_DIR="/proc/%d/root%s" % (pid, ctx.shm_dir))
        listed = e2elib.run([args.memtop, "--list"], env, timeout=60)
        rows = [ln for ln in listed.stdout.splitlines() if ln.split()[:1] == [str(pid)]]
        check(len(rows) == 1 and REASON in rows[0],
              "--list does not say why:\n" + e2elib.describe(listed))
        # Let it try to publish a few more times (interval 1 s by default).
        batch2 = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env,
                            timeout=60)
        check(REASON in batch2.stderr, "second look:\n" + e2elib.describe(batch2))
    finally:
        e2elib.stop(proc)
    err = proc.stderr.read()
    n = err.count("cannot grow segment")
    check(n == 1, "the target reported the full segment %d times:\n%s" % (n, err))
    print("ok: %s; reported once" % batch.stderr.strip())


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
