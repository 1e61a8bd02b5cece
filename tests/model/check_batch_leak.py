#!/usr/bin/env python3
"""check_batch_leak.py -- `memtop --batch -s leak` on a synthetic segment.

Why it exists: the batch report sorts by the leak score computed from the
segment's checkpoints alone (no viewer history); it must run, say it is
sorted by leak, show the scores (LEAK column) and list every trace in the order of their scores: the
synthetic trace i grows by (i + 1) x 100 B/s, so the fastest grower (trace
7) comes first and trace 0 last.
usage: check_batch_leak.py MEMTOP MAKE_SEGMENT WORKDIR
"""

import os
import re
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
    # make_segment: trace i is at mod(i % 3).so+0x(1000 + i).
    want = ["mod%d.so+0x%x" % (i % 3, 0x1000 + i) for i in range(7, -1, -1)]
    got = [word for row in rows for word in row.split() if "+0x" in word]
    # the score it sorts by is shown: the LEAK column, just before the location
    scores = [int(row.split()[row.split().index(w) - 1]) for row, w in zip(rows, got)]
    if not re.search(r"GROWTH\s+LEAK\s+LOCATION", proc.stdout) or \
            scores != sorted(scores, reverse=True) or not scores or scores[0] <= 0:
        print("FAIL: no LEAK column, or its scores %s are not what the rows are sorted by:\n%s"
              % (scores, proc.stdout))
        return 1
    if proc.returncode != 0 or "sorted by leak" not in proc.stdout or got != want:
        print("FAIL: expected the rows in the order %s, got %s" % (want, got))
        print("FAIL: memtop --batch -s leak: exit %d\nstdout:\n%s\nstderr:\n%s" %
              (proc.returncode, proc.stdout, proc.stderr))
        return 1
    print("ok: --batch -s leak lists %d traces, fastest grower first" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
