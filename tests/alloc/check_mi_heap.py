#!/usr/bin/env python3
"""check_mi_heap.py -- mimalloc's first-class heaps are counted to the byte.

Why it exists (issue 11): memtop hooked mimalloc's malloc family but not its
mi_heap_* functions (nor mi_strdup and the other variants), so a program
allocating from heaps of its own (mi_heap_new) was NOT exact, its heap
blocks unseen; mi_heap_destroy frees a whole heap without one free call.
tests/alloc/alloc_mi_heap leaks known bytes from named functions through
mi_heap_malloc, mi_heap_calloc, mi_heap_realloc, mi_heap_strdup,
mi_heap_malloc_aligned, mi_heap_malloc through a pointer from dlsym (past
the PLT: seen because the entry is redirected), a heap given to
mi_heap_delete (its blocks stay live), mi_strdup and mi_reallocarray
(whose trampoline calls mi_reallocn: mimalloc's own call, which memtop
must not count again, nor its block's free); main frees the rest
with mi_free and destroys a heap of 200 blocks.  The snapshot must match
per function to the byte, nothing of main's live, no unknown frees, the
data exact (--strict exits 0), and the program's output unchanged; and
mimalloc's own view (its version and the memory it holds, from
mi_version and mi_process_info) is in its entry and the totals.
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

LEAKS = {"leak_heap_malloc": 1000, "leak_heap_calloc": 500, "leak_heap_realloc": 700,
         "leak_heap_strdup": 100, "leak_heap_aligned": 300, "leak_heap_ptr": 1234,
         "leak_deleted": 400, "leak_strdup": 50, "leak_reallocarray": 600}


def live_per_function(snap):
    """Live bytes per first frame; the program's functions only (and any
    frame in mimalloc or main, which must not be there)."""
    per = {}
    for tr in snap["traces"]:
        if not tr["live_bytes"]:
            continue
        fn = (tr["frames"][0].get("function") or "") if tr["frames"] else ""
        if fn in LEAKS or fn in ("main", "destroyed") or fn.startswith("mi_"):
            per[fn] = per.get(fn, 0) + tr["live_bytes"]
    return per


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.mi_heap:
        e2elib.fail("mimalloc was not found at configure time: install libmimalloc-dev "
                    "(scripts/install-deps.sh)")
    out = ctx.path("mi_heap.json")
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--", mine.mi_heap]
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.stdout == "ok\n", "the program changed: " + where)
    snap = e2elib.load_json(out)
    health = snap["health"]
    per = live_per_function(snap)
    check(per == LEAKS, "live bytes per function %r, expected %r\n%s" % (per, LEAKS, where))
    alloclib.check_nothing_missed(health, where)
    check(health["exact"] is True and proc.returncode == 0,
          "not exact (%r) or --strict failed\n%s" % (health.get("not_exact"), where))
    mi = [a for a in health["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 1 and mi[0]["hooked"] and mi[0]["exact"], "mimalloc not listed as hooked "
          "and exact: %r" % health["allocators"])
    # mimalloc's own view (mi_process_info, mi_version): what it holds
    res = mi[0].get("resident")
    check(re.fullmatch(r"\d+\.\d+\.\d+", mi[0].get("version") or "") and res and
          snap["totals"].get("allocator_bytes") == res,
          "mimalloc's own view: version %r, resident %r, totals allocator_bytes %r" %
          (mi[0].get("version"), res, snap["totals"].get("allocator_bytes")))


if __name__ == "__main__":
    alloclib.run(test)
