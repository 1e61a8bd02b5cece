#!/usr/bin/env python3
"""check_recorded_allocators.py -- a recording names the allocators, as the live view does.

Why it exists: the replay header and `memtop -f F --batch` said
"allocator 2.7 MiB" where the live ones said "allocator jemalloc 5.3.0
(static) 2.7 MiB", the JSON export had "allocators": null, and an unseen
allocator was "1 allocator memtop cannot see (the live view names them)".
The writer now adds ALLOCATORS records (docs/recording-format.md, 15).
For each program, recorded from its start with `memtop --record F --export
live.json -- PROG`: `memtop -f F --export` lists the same allocators as the
live export (every field but the figures, which are not recorded: null),
its health says the same about exactness (health.allocators, health.exact, health.not_exact), and `memtop -f F --batch`'s heap
line names the allocator as the live batch does.  Programs: jemalloc linked
statically, a shared libmimalloc, a program with its own malloc (unseen:
NOT exact, the reason named), and a glibc one (whose list is empty, live
and replayed).
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

FIGURES = ("allocated", "active", "resident", "mapped", "allocated_before_hooks")


def names(allocators):
    return [{k: v for k, v in a.items() if k not in FIGURES} for a in allocators or []]


def heap_allocator(text):
    m = re.search(r"^heap: .*\| allocator( [^|]*?)? [0-9.]+ [KMG]?i?B, in use", text, re.M)
    check(m, "no heap line with the allocator:\n" + text[:800])
    return (m.group(1) or "").strip()


def recorded(ctx, name, prog, want):
    dat, live = ctx.path(name + ".dat"), ctx.path(name + "-live.json")
    cmd = [ctx.args.memtop, "--record", dat, "--export", live, "--"] + prog
    rec = e2elib.run(cmd, ctx.env)
    check(os.path.exists(dat) and os.path.exists(live),
          "%s: recording failed\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(rec)))
    live_snap = e2elib.load_json(live)
    out = ctx.path(name + "-replay.json")
    cmd = [ctx.args.memtop, "-f", dat, "--export", out]
    res = e2elib.run(cmd, ctx.env)
    check(res.returncode == 0, "%s exited %d\n%s" % (e2elib.show_cmd(cmd), res.returncode,
                                                     e2elib.describe(res)))
    snap = e2elib.load_json(out)
    check(snap["health"]["allocators"] is not None and names(snap["health"]["allocators"]) ==
          names(live_snap["health"]["allocators"]),
          "%s: the replay lists the live allocators:\n%r\nlive:\n%r" %
          (name, snap["health"]["allocators"], live_snap["health"]["allocators"]))
    check(all(a[k] is None for a in snap["health"]["allocators"] for k in FIGURES),
          "%s: the figures are not recorded (null): %r" % (name, snap["health"]["allocators"]))
    for k in ("exact", "not_exact"):
        check(snap["health"].get(k) == live_snap["health"].get(k),
              "%s: health.%s %r, live %r" % (name, k, snap["health"].get(k),
                                            live_snap["health"].get(k)))
    check(want is None or want in [a["kind"] for a in snap["health"]["allocators"]],
          "%s: no %s in %r" % (name, want, snap["health"]["allocators"]))
    cmd = [ctx.args.memtop, "--batch", "-n", "1", "--"] + prog
    live_batch = e2elib.run(cmd, ctx.env)
    cmd = [ctx.args.memtop, "-f", dat, "--batch"]
    batch = e2elib.run(cmd, ctx.env)
    check(batch.returncode == 0, "%s exited %d" % (e2elib.show_cmd(cmd), batch.returncode))
    got, exp = heap_allocator(batch.stdout), heap_allocator(live_batch.stdout)
    check(got == exp, "%s: --batch's heap line says allocator %r, live %r" % (name, got, exp))
    return got


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    check(mine.bump, "--bump is required")
    ctx = e2elib.Ctx(args)
    if mine.je_static:
        got = recorded(ctx, "je_static", [mine.je_static], "jemalloc")
        check(got.startswith("jemalloc 5.") and got.endswith("(static)"),
              "jemalloc static: the replay names it 'jemalloc 5.x (static)': %r" % got)
    if mine.mimalloc:
        recorded(ctx, "mimalloc", [mine.mimalloc], "mimalloc")
    recorded(ctx, "bump", [mine.bump], "malloc")
    recorded(ctx, "glibc", ["sh", "-c", "exit 0"], None)  # glibc: an empty list, live too


alloclib.run(test)
