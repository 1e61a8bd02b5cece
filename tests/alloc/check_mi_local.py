#!/usr/bin/env python3
"""check_mi_local.py -- a libmimalloc loaded RTLD_LOCAL still serves the mi_* calls memtop intercepts.

Why it exists (issue 11): libmemtop.so defines mimalloc's mi_* names and
calls the next definition, found with dlsym(RTLD_NEXT).  A library linked
with libmimalloc and loaded with dlopen RTLD_LOCAL binds its mi_* calls to
memtop's definitions (the global scope comes first), but libmimalloc is
not in the global scope: dlsym(RTLD_NEXT) found nothing, and until memtop
redirected libmimalloc's entry points (after dlopen returned) its mi_malloc
returned NULL and its mi_free did nothing.  The library's constructor,
which runs inside dlopen, saw its mi_malloc fail where it succeeds without
memtop.  memtop now looks the definition up in the other loaded modules
(src/preload/hook/hook_loaded_sym.c).  tests/alloc/alloc_mi_local loads
alloc_mi_local_lib that way: its output and exit status must be the same
with and without memtop ("ok", 0), and the snapshot must count the
library's leaks to the byte (the constructor's and a later call's), keep
none of the blocks it freed with mi_free live, and miss nothing.  A
library whose constructor takes libmimalloc's own mi_malloc with dlsym
(alloc_mi_ctor_lib) while the publisher's scan of libmimalloc waits for
the loader's lock, which that constructor holds (the wait lengthened with
MEMTOP_TEST_SCAN_LOADER_WAIT_MS): the program must finish (that dlsym
does not wait for the scan that waits for it), and the constructor's
leak through the pointer be counted (the dlsym scans itself and redirects
libmimalloc before it returns; it gave up at once before).
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

LEAKS = {"leak_in_ctor": 700, "leak_in_call": 1300}


def live_per_function(snap):
    """Live bytes per first frame: the library's functions, and any frame
    in its constructor or lib_work (a block they freed) or in mimalloc."""
    per = {}
    for tr in snap["traces"]:
        if not tr["live_bytes"]:
            continue
        fn = (tr["frames"][0].get("function") or "") if tr["frames"] else ""
        if fn in LEAKS or fn in ("lib_init", "lib_work") or fn.startswith("mi_"):
            per[fn] = per.get(fn, 0) + tr["live_bytes"]
    return per


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.mi_local or not mine.mi_local_lib:
        e2elib.fail("mimalloc was not found at configure time: install libmimalloc-dev "
                    "(scripts/install-deps.sh)")
    prog = [mine.mi_local, mine.mi_local_lib]
    plain = e2elib.run(prog, ctx.env)
    check(plain.returncode == 0 and plain.stdout == "ok\n",
          "the program fails without memtop: %s\n%s" % (e2elib.show_cmd(prog),
                                                         e2elib.describe(plain)))
    out = ctx.path("mi_local.json")
    cmd = [ctx.args.memtop, "--export", out, "--"] + prog
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0 and proc.stdout == "ok\n",
          "the program changed under memtop: " + where)
    snap = e2elib.load_json(out)
    per = live_per_function(snap)
    check(per == LEAKS, "live bytes per function %r, expected %r\n%s" % (per, LEAKS, where))
    alloclib.check_nothing_missed(snap["health"], where)
    mi = [a for a in snap["health"]["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 1 and mi[0]["hooked"], "mimalloc not listed as hooked: %r" %
          snap["health"]["allocators"])

    ctor_dlsym(ctx, mine)


def ctor_dlsym(ctx, mine):
    prog = [mine.mi_local, mine.mi_ctor_lib, "wait"]
    out = ctx.path("mi_ctor.json")
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--"] + prog
    proc = e2elib.run(cmd, dict(ctx.env, MEMTOP_TEST_SCAN_LOADER_WAIT_MS="600"), timeout=60)
    where = "MEMTOP_TEST_SCAN_LOADER_WAIT_MS=600 %s\n%s" % (e2elib.show_cmd(cmd),
                                                           e2elib.describe(proc))
    check(proc.stdout == "ok\n", "the program changed under memtop: " + where)
    snap = e2elib.load_json(out)
    per = live_per_function(snap)
    check(per == LEAKS, "a dlsym in a constructor: live bytes per function %r, expected %r\n%s" %
          (per, LEAKS, where))
    check(proc.returncode == 0 and snap["health"]["exact"] is True,
          "not exact (%r) or --strict failed\n%s" % (snap["health"].get("not_exact"), where))
    alloclib.check_nothing_missed(snap["health"], where)


if __name__ == "__main__":
    alloclib.run(test)
