#!/usr/bin/env python3
"""check_mi_static.py -- a mimalloc linked into a module is hooked exactly, by redirecting its entry points.

Why it exists (issue 11): a mimalloc linked into a module (the Rust
mimalloc crate, a C program linking mimalloc statically) was found but
reported "NOT exact ... not hooked".  memtop now redirects its entry
points as it does a shared libmimalloc's.  Debian ships only
libmimalloc.so, so the module here is a copy of libmimalloc.so.2 whose
name and SONAME do not name mimalloc (mi_copy.py): to the scan, "an
allocator linked into a library".  tests/alloc/alloc_mi_copy calls it only
through pointers from dlsym (bypassing the PLT), including the copy's own
malloc, free and operator new (its override, aliases of mi_malloc,
mi_free, mi_new: each block counted once, and the module not reported as
an allocator of its own).  Loaded at start (DT_NEEDED), loaded with dlopen
after start while a thread allocates, and in a fork child: each snapshot
must hold what each named function leaked, to the byte, and none of the
blocks main frees; exact, --strict exit 0, the allocator listed once as a
statically linked mimalloc, hooked, "how": "redirect"; the program's output
and exit status its own.  A second mimalloc (libmimalloc.so.2 loaded with
dlopen beside the copy) is not redirected, since memtop's mi_* slots are
one set: the data is NOT exact, saying so, --strict exits 3, and the
copy's blocks are still counted to the byte.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

LEAKS = {"leak_ptr": 3000, "leak_calloc": 1000, "leak_malloc": 500, "leak_heap": 700,
         "leak_new": 400}


def leaked(snap):
    """Live bytes per first frame, for the program's own functions."""
    per = {}
    for tr in snap["traces"]:
        fn = (tr["frames"][0].get("function") or "") if tr["frames"] else ""
        if tr["live_bytes"] and (fn in LEAKS or fn in ("main", "work")):
            per[fn] = per.get(fn, 0) + tr["live_bytes"]
    return per


def check_exact(snap, what, where):
    per = leaked(snap)
    check(per == LEAKS, "%s: live bytes per function %r, expected %r\n%s" % (what, per, LEAKS,
                                                                           where))
    health = snap["health"]
    check(health["exact"] is True, "%s: not exact: %r\n%s" % (what, health.get("not_exact"), where))
    alloclib.check_nothing_missed(health, where)
    mi = [a for a in health["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 1 and mi[0]["hooked"] and mi[0]["how"] == "redirect" and mi[0]["static"] and
          mi[0]["module"].endswith("libcopyalloc.so2"),
          "%s: not listed as a linked-in mimalloc, redirected: %r" % (what, health["allocators"]))
    check(len(health["allocators"]) == 1,
          "%s: another allocator listed (its own malloc?): %r" % (what, health["allocators"]))


def run(ctx, name, prog):
    proc, snap, where = alloclib.export_strict(ctx, name, prog)
    check(proc.returncode == 0 and proc.stdout == "ok\n",
          "the program changed or --strict failed: " + where)
    check_exact(snap, name, where)


def second(ctx, prog):
    proc, snap, where = alloclib.export_strict(ctx, "second", prog)
    check(proc.returncode == 3 and proc.stdout == "ok\n",
          "a second mimalloc: the program changed or --strict did not exit 3: " + where)
    health = snap["health"]
    note = ("mimalloc in libmimalloc.so.2 not hooked (memtop hooks one mimalloc: the one in "
            "libcopyalloc.so2)")
    check(health["exact"] is False and note in (health.get("not_exact") or ""),
          "a second mimalloc is not reported: %r\n%s" % (health.get("not_exact"), where))
    check("NOT exact: " + note in proc.stderr, "the target did not log it:\n" + where)
    mi = [a for a in health["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 2 and mi[0]["how"] == "redirect" and mi[0]["exact"] and
          not mi[1]["hooked"] and not mi[1]["exact"],
          "the copy must stay redirected, the second not hooked: %r" % mi)
    per = leaked(snap)
    check(per == LEAKS, "second: live bytes per function %r, expected %r\n%s" % (per, LEAKS, where))


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.mi_copy:
        e2elib.fail("mimalloc was not found at configure time: install libmimalloc-dev "
                    "(scripts/install-deps.sh)")
    run(ctx, "start", [mine.mi_copy, "start"])
    second(ctx, [mine.mi_copy, "second"])
    run(ctx, "late", [mine.mi_copy_late, "late", mine.mi_copy_lib])
    child = alloclib.fork_child(ctx, [mine.mi_copy, "fork"], r"child (\d+)$",
                                ctx.env_with(LD_PRELOAD=ctx.args.preload))
    check_exact(child, "fork child", "(memtop -p CHILD --export --strict)")


if __name__ == "__main__":
    alloclib.run(test)
