#!/usr/bin/env python3
"""check_je_fork.py -- forks never deadlock with memtop's publisher asking jemalloc for its figures.

Why it exists (issue 11): memtop asked jemalloc for its own figures
(mallctl "epoch", "stats.*", which take jemalloc's locks) while holding its
publish lock.  A jemalloc loaded after memtop registers its fork handler
after memtop's, so at a fork its handler runs first and takes every
jemalloc lock, then memtop's fork_prepare waits for the publish lock: held
by the publisher, which waits in mallctl for jemalloc's locks.  The
program hung for good.  memtop now asks jemalloc with no lock of its own
held, like tcmalloc and mimalloc (src/preload/alloc/alloc_stats.c), and
keeps the figures for the publish.  tests/alloc/alloc_je_fork loads
libjemalloc with dlopen, then forks 200 times while three threads allocate
through it, under memtop with a 10 ms publish interval: it must finish
(its own 60 s alarm reports a hang as "timeout", exit 3) with its output
and exit status, and jemalloc must be listed hooked with its own figures,
its entry points redirected ("how": "redirect": loaded after start, so
with memtop's other threads stopped, alloc_stop.c).
And the allocator scan must not call into a library that another thread's
dlopen has mapped but not relocated yet (it crashed the program in
libjemalloc's mallctl; src/preload/alloc/alloc_scan.c take_ref): eight
runs that load libjemalloc while the publisher polls must succeed.
The loader's static TLS reserve is raised (GLIBC_TUNABLES) because
libjemalloc uses initial-exec TLS, which dlopen refuses otherwise.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

FORKS = 200


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.je_fork:
        e2elib.fail("libjemalloc.so was not found at configure time: install libjemalloc-dev "
                    "(scripts/install-deps.sh)")
    env = ctx.env_with(GLIBC_TUNABLES="glibc.rtld.optional_static_tls=65536")
    prog = [mine.je_fork, str(FORKS)]
    plain = e2elib.run(prog, env)
    check(plain.returncode == 0 and plain.stdout == "ok\n",
          "the program fails without memtop: %s\n%s" % (e2elib.show_cmd(prog),
                                                         e2elib.describe(plain)))
    out = ctx.path("je_fork.json")
    cmd = [ctx.args.memtop, "--export", out, "--"] + prog
    proc = e2elib.run(cmd, ctx.env_with(GLIBC_TUNABLES="glibc.rtld.optional_static_tls=65536",
                                        MEMTOP_INTERVAL_MS=10))
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.stdout != "timeout\n", "a fork and memtop's publisher deadlocked: " + where)
    check(proc.returncode == 0 and proc.stdout == "ok\n", "the program changed: " + where)
    snap = e2elib.load_json(out)
    je = [a for a in snap["health"]["allocators"] if a["kind"] == "jemalloc"]
    check(len(je) == 1 and je[0]["hooked"], "jemalloc not listed as hooked: %r" %
          snap["health"]["allocators"])
    # loaded after start, memtop's publisher running: redirected with it stopped
    check(je[0]["how"] == "redirect", "the late jemalloc is hooked by %r, not redirected" %
          je[0]["how"])
    figs = [je[0].get(k) for k in ("allocated", "active", "resident", "mapped")]
    check(None not in figs and 0 < figs[0] <= figs[1] <= figs[2] <= figs[3],
          "jemalloc's own figures missing or inconsistent: allocated/active/resident/mapped "
          "%r\n%s" % (figs, where))

    # The allocator scan of the publisher's poll must not call into a
    # library another thread's dlopen has mapped but not relocated yet
    # (it crashed in libjemalloc's mallctl): the publisher polls from the
    # start here (MEMTOP_START_MS=0), every 10 ms at most, while the program loads libjemalloc.
    for i in range(8):
        cmd = [ctx.args.memtop, "--export", ctx.path("je_load%d.json" % i), "--", mine.je_fork, "0"]
        proc = e2elib.run(cmd, ctx.env_with(GLIBC_TUNABLES="glibc.rtld.optional_static_tls=65536",
                                            MEMTOP_START_MS=0, MEMTOP_INTERVAL_MS=10))
        check(proc.returncode == 0 and proc.stdout == "ok\n",
              "loading libjemalloc while the publisher polls: %s\n%s" %
              (e2elib.show_cmd(cmd), e2elib.describe(proc)))


if __name__ == "__main__":
    alloclib.run(test)
