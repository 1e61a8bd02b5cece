#!/usr/bin/env python3
"""sec_shrinking_segment.py -- a segment's owner shrinks it while root reads it.

The attack: a local user runs a process with a memtop segment (here a
synthetic one, made by make_segment for the attacker's own pid) and, in a
loop, cuts the file with ftruncate, grows it back and rewrites it.  Root
watches that process with `memtop -p PID --batch`, `--export` and `--list`.
Before the guard around the reader's accesses (src/ipc/shm_guard.c), a load
from a page that was just cut off killed memtop with SIGBUS.

Passes if no memtop run was ended by a signal (or by a sanitizer's report)
and every failing run printed nothing but one-line "memtop: ..." messages
and exited 1.
"""

import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, fail  # noqa: E402

# Without the guard, about 1 batch run in 10 and 1 list run in 50 died of
# SIGBUS here.  (tests/unit/reader_shrinking.c does 10000 reads in-process.)
BATCH_RUNS = 400
LIST_RUNS = 150
EXPORT_RUNS = 2  # each waits 2 s for an answer the attacker never gives

# The attacker, run as the throwaway user: make a segment for its own pid,
# then cut it at page boundaries spread over its data, grow it back and
# rewrite the lost bytes, forever.
SHRINKER = r"""
import os, subprocess, sys
make_segment, shm = sys.argv[1], sys.argv[2]
pid = os.getpid()
subprocess.run([make_segment, shm, str(pid), "large"], check=True)
fd = os.open(os.path.join(shm, "memtop-%d" % pid), os.O_RDWR)
size = os.fstat(fd).st_size
data = os.pread(fd, size, 0)
end = len(data.rstrip(b"\0"))
cuts = [0, 4096, 16384] + [(end * k // 16) & ~4095 for k in range(1, 16)]
i = 0
while True:
    cut = cuts[i % len(cuts)]
    i += 1
    os.ftruncate(fd, cut)
    os.ftruncate(fd, size)
    os.pwrite(fd, data[cut:end], cut)
"""


def verdict(name, proc, failures):
    """Records what was wrong with one memtop run (nothing if it was clean)."""
    if proc.returncode < 0 or proc.returncode > 1:
        failures.append("%s: %s" % (name, seclib.e2elib.describe(proc)))
        return
    lines = proc.stderr.splitlines()
    bad = [ln for ln in lines if not ln.startswith("memtop: ")]
    if bad or (proc.returncode == 1 and not lines):
        failures.append("%s: not one-line errors: %s" % (name, seclib.e2elib.describe(proc)))


def test(args):
    ctx = seclib.Ctx(args)
    shm = seclib.shared_dir(ctx, "shm")
    env = ctx.env_with(MEMTOP_SHM_DIR=shm)
    with seclib.throwaway_users(ctx, 1) as (attacker,):
        # The system's python: the one running this test may be under /root.
        python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
        owner = seclib.start_as(attacker, [python, "-c", SHRINKER, args.make_segment, shm], env)
        try:
            seg = os.path.join(shm, "memtop-%d" % owner.pid)

            def shrinking():
                if owner.poll() is not None:
                    fail("the attacker's shrinker ended: %s" % owner.stderr.read())
                return os.path.exists(seg)

            seclib.e2elib.wait_for(shrinking, "the attacker's segment %s" % seg)
            pid = str(owner.pid)
            failures, errors, reads = [], {}, 0
            runs = [("batch", ["-p", pid, "--batch", "-n", "3", "-d", "0.01", "--top", "5"],
                     BATCH_RUNS),
                    ("list", ["--list"], LIST_RUNS),
                    ("export", ["-p", pid, "--export", ctx.path("snap.json")], EXPORT_RUNS)]
            started = time.monotonic()
            for name, opts, count in runs:
                for _ in range(count):
                    proc = seclib.run_as(None, [args.memtop] + opts, env)
                    verdict(name, proc, failures)
                    # reads that gave a report (a list: one), plus the one that failed
                    reads += (name == "list") + proc.stdout.count("snapshot #") + proc.returncode
                    for ln in proc.stderr.splitlines():
                        key = re.sub(r"[0-9]+", "N", ln.split(": ", 2)[-1])[:50]
                        errors[key] = errors.get(key, 0) + 1
                    if owner.poll() is not None:
                        fail("the attacker's shrinker stopped: %s" % owner.stderr.read())
            print("%d runs, %d reads of the segment in %.0f s; messages: %s" %
                  (BATCH_RUNS + LIST_RUNS + EXPORT_RUNS, reads, time.monotonic() - started,
                   sorted(errors.items())))
            if failures:
                fail("%d of %d runs were not clean; first ones:\n%s" %
                     (len(failures), BATCH_RUNS + LIST_RUNS + EXPORT_RUNS,
                      "\n".join(failures[:3])))
        finally:
            seclib.e2elib.stop(owner)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[0])
