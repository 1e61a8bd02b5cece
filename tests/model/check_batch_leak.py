#!/usr/bin/env python3
"""check_batch_leak.py -- `memtop --batch -s leak` on a synthetic segment.

Why it exists: the batch report sorts by the leak score computed from the
segment's checkpoints alone (no viewer history); it must run, say it is
sorted by leak, and list every trace.
usage: check_batch_leak.py MEMTOP MAKE_SEGMENT WORKDIR
"""

import os
import shutil
import subprocess
import sys


def main():
    memtop, make_segment, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    target = subprocess.Popen(["sleep", "60"])
    try:
        subprocess.run([make_segment, work, str(target.pid), "exited"], check=True)
        env = dict(os.environ, MEMTOP_SHM_DIR=work)
        proc = subprocess.run([memtop, "-p", str(target.pid), "--batch", "-s", "leak"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        target.kill()
        target.wait()
    rows = [line for line in proc.stdout.splitlines() if "+0x" in line]
    if proc.returncode != 0 or "sorted by leak" not in proc.stdout or len(rows) != 8:
        print("FAIL: memtop --batch -s leak: exit %d\nstdout:\n%s\nstderr:\n%s" %
              (proc.returncode, proc.stdout, proc.stderr))
        return 1
    print("ok: --batch -s leak lists %d traces" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
