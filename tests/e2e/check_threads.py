#!/usr/bin/env python3
"""check_threads.py -- "threads" counts the threads that allocate now, not ever.

Why it exists: the totals' thread count (--batch's "threads: N", the
JSON's totals.thread_count) only ever grew: a thread-per-task server that
had run 200 short threads showed "threads: 201" with 2 alive, and a fork
child kept its parent's count.  thread_churn runs 50 threads that allocate
and exit, keeps 3 that allocated, and forks: the process must show 4 (the
main thread and the 3), the child 1.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def threads_shown(args, ctx, pid):
    """--batch's "threads: N" and the JSON's totals.thread_count of pid."""
    proc = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env, timeout=60)
    m = re.search(r"^traces: \d+, threads: (\d+)$", proc.stdout, re.M)
    check(proc.returncode == 0 and m, "no threads line:\n" + e2elib.describe(proc))
    out = ctx.path("snap-%d.json" % pid)
    proc = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env, timeout=60)
    check(proc.returncode == 0, "memtop --export failed:\n" + e2elib.describe(proc))
    return int(m.group(1)), e2elib.load_json(out)["totals"]["thread_count"]


def test(args):
    ctx = e2elib.Ctx(args)
    ready = ctx.path("ready")
    target = e2elib.start_preloaded(ctx, [args.thread_churn, ready])
    child = None
    try:
        parent, child = map(int, e2elib.wait_for(
            lambda: os.path.exists(ready) and open(ready).read().split(), "the pids"))
        e2elib.wait_for(lambda: os.path.exists(os.path.join(ctx.shm_dir, "memtop-%d" % child)),
                        "the child's segment")
        got = {pid: threads_shown(args, ctx, pid) for pid in (parent, child)}
        check(got[parent] == (4, 4) and got[child] == (1, 1),
              "threads (--batch, JSON) shown: parent %s and child %s, not 4 and 1" %
              (got[parent], got[child]))
        print("ok: parent %d threads, child %d" % (got[parent][0], got[child][0]))
    finally:
        e2elib.end_pid(child)
        e2elib.stop(target)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
