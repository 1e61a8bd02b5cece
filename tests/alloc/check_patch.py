#!/usr/bin/env python3
"""check_patch.py -- calls that bypass the PLT reach memtop once entry points are redirected.

Why it exists (issue 11): a program that takes mimalloc's functions with
dlsym(handle, "mi_malloc") calls libmimalloc directly, past the names
memtop interposes, and memtop saw none of it.  memtop now redirects
libmimalloc's entry points in memory (src/preload/alloc/alloc_patch.c) when it
starts.  The snapshot of tests/alloc/alloc_mi_dlsym must match, to the
byte, what each named function leaked (mi_malloc + mi_realloc, mi_calloc,
and malloc, which is libmimalloc's mi_malloc: counted once), keep none of
the blocks main frees live (mi_free_size, mi_free, free, in every
pairing), count no unknown frees or untracked allocations, and be exact (mimalloc's
mi_heap_* API is hooked too: check_mi_heap.py); the program's output and exit
status stay its own, and it keeps its allocator (the blocks are
libmimalloc's: mi_free of them works).  A C++ program on a statically
linked tcmalloc (libtcmalloc_minimal.a, whose malloc, free and operators
win over memtop's) must be exact (--strict exits 0), with tcmalloc listed
as hooked and each function's leak (new[], malloc, calloc, realloc,
posix_memalign) to the byte, none of main's new/delete/free loops live,
and its blocks still tcmalloc's (the program checks, prints "ok"), and
tcmalloc's own view (MallocExtension_GetNumericProperty) in its entry and
the totals' allocator bytes; the same program on the shared
libtcmalloc_minimal.so likewise; after a bad_alloc thrown through the
redirected operator new[] and caught, its leaks still counted.  A
libmimalloc loaded with dlopen after start, while three other threads
run, is patched with them stopped (src/preload/alloc/alloc_stop.c) before
dlsym hands out its functions: exact, --strict exits 0, its leak counted
to the byte, none of the blocks freed through mi_free live.  A program
thread that names itself memtop-publish (prctl) is stopped all the same:
memtop exempts its own threads by thread id, not by name; the thread's
nap is interrupted by the stop (EINTR) as a plain sleeper's is.  A thread
sleeping on a small stack with an alternate signal stack (alloc_mi_late
smallstack) takes the stop's signal on that stack (SA_ONSTACK) instead of
being killed by a signal frame that does not fit its stack.  A dlsym
right after the dlopen while the publisher's scan of that libmimalloc waits
for the loader's lock (held there with MEMTOP_TEST_SCAN_LOADER_WAIT_MS)
returns only after the redirect: exact, every call seen (it gave up on the
scan, and the program called libmimalloc unseen while the snapshot said
exact).  One whose wait for the scan runs out (the publisher's scan holds
its lock, MEMTOP_TEST_SCAN_HOLD_MS) makes mimalloc NOT exact, saying why,
and --strict fail.
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

LEAKS = {"leak_ptr": 3000, "leak_calloc": 1000, "leak_malloc": 500}
TC_LEAKS = {"leak_new": 1000, "leak_malloc": 700, "leak_calloc": 300, "leak_realloc": 2000,
            "leak_aligned": 512}



def live_per_function(snap, names):
    """Live bytes per first frame, for the program's own functions (stdio's
    buffer, the loader's and tcmalloc's own are not the test's)."""
    per = {}
    for tr in snap["traces"]:
        if not tr["live_bytes"]:
            continue
        fn = (tr["frames"][0].get("function") or "") if tr["frames"] else ""
        if fn not in names and fn != "main":
            continue
        per[fn] = per.get(fn, 0) + tr["live_bytes"]
    return per


def mi_dlsym(ctx, prog):
    out = ctx.path("mi_dlsym.json")
    cmd = [ctx.args.memtop, "--export", out, "--"] + [prog]
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0 and proc.stdout == "ok\n", "the program changed: " + where)
    snap = e2elib.load_json(out)
    per = live_per_function(snap, LEAKS)
    check(per == LEAKS, "live bytes per function %r, expected %r\n%s" % (per, LEAKS, where))
    health = snap["health"]
    check(health["exact"] is True, "health.not_exact %r: expected exact" %
          health.get("not_exact"))
    alloclib.check_nothing_missed(health, where)
    mi = [a for a in health["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 1 and mi[0]["hooked"] and mi[0]["how"] == "redirect",
          "mimalloc not listed as hooked (redirected): %r" % health["allocators"])


def tc_exact(ctx, name, prog, is_static):
    out = ctx.path(name + ".json")
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--"] + [prog]
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0 and proc.stdout == "ok\n",
          "the program changed or --strict failed: " + where)
    snap = e2elib.load_json(out)
    health = snap["health"]
    check(health["exact"] is True, "not exact: %r\n%s" % (health.get("not_exact"), where))
    tc = [a for a in health["allocators"] if a["kind"] == "tcmalloc"]
    check(len(tc) == 1 and tc[0]["hooked"] and tc[0]["how"] == "redirect" and
          tc[0]["static"] == is_static,
          "tcmalloc not listed as hooked (static: %s): %r" % (is_static, health["allocators"]))
    per = live_per_function(snap, TC_LEAKS)
    check(per == TC_LEAKS, "live bytes per function %r, expected %r\n%s" % (per, TC_LEAKS, where))
    # tcmalloc's own view (MallocExtension): its version and figures, and the
    # totals' allocator bytes are its resident and allocated bytes
    a, t = tc[0], snap["totals"]
    figs = [a.get(k) for k in ("allocated", "active", "resident", "mapped")]
    check(re.fullmatch(r"\d+\.\d+.*", a.get("version") or "") and None not in figs and
          figs[0] <= figs[1] <= figs[2] <= figs[3] and figs[0] > 0,
          "tcmalloc's own view missing or inconsistent: version %r, allocated/active/resident/"
          "mapped %r" % (a.get("version"), figs))
    check(t.get("allocator_bytes") == figs[2] and t.get("allocator_inuse_bytes") == figs[0],
          "totals allocator_bytes %r / inuse %r, expected tcmalloc's resident %r / allocated %r" %
          (t.get("allocator_bytes"), t.get("allocator_inuse_bytes"), figs[2], figs[0]))


def tc_throw(ctx, prog):
    """A bad_alloc thrown through the redirected operator new[] (caught):
    the thread's later blocks are still counted; only the exception object,
    allocated inside tcmalloc's operator with the thread inside memtop, is
    missed: its free is the one unknown free (said NOT exact)."""
    out = ctx.path("tcmalloc-throw.json")
    cmd = [ctx.args.memtop, "--export", out, "--", prog, "throw"]
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0 and proc.stdout == "ok\n", "the program changed: " + where)
    snap = e2elib.load_json(out)
    health = snap["health"]
    check(health["exact"] is False and health["unknown_free_count"] == 1 and
          health["untracked_alloc_count"] == 0,
          "after bad_alloc: expected 1 unknown free (the exception object) and nothing else: %r"
          % {k: v for k, v in health.items() if k != "allocators"})
    per = live_per_function(snap, TC_LEAKS)
    check(per == TC_LEAKS, "after bad_alloc: live bytes per function %r, expected %r\n%s" %
          (per, TC_LEAKS, where))


def run_mi_late(ctx, prog, mode, env):
    """memtop --export --strict -- alloc_mi_late [mode], with env added:
    (the process, the snapshot, a description of the run)."""
    out = ctx.path("mi_late%s%s.json" % (mode or "", "".join(sorted(env or {}))))
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--"] + [prog] + ([mode] if mode else [])
    proc = e2elib.run(cmd, dict(ctx.env, **(env or {})))
    where = "%s %s\n%s" % (" ".join("%s=%s" % kv for kv in sorted((env or {}).items())),
                          e2elib.show_cmd(cmd), e2elib.describe(proc))
    return proc, e2elib.load_json(out), where


def mi_late(ctx, prog, mode=None, env=None):
    proc, snap, where = run_mi_late(ctx, prog, mode, env)
    health = snap["health"]
    check(proc.stdout == "loaded\n", "the program changed: " + where)
    check(proc.returncode == 0 and health["exact"] is True,
          "a libmimalloc loaded late is not exact (%r) or --strict failed\n%s" %
          (health.get("not_exact"), where))
    per = live_per_function(snap, {"leak_late": 1000})
    check(per == {"leak_late": 1000}, "live bytes per function %r, expected leak_late 1000 and "
          "nothing of main's mi_malloc/mi_zalloc/mi_free loop\n%s" % (per, where))
    alloclib.check_nothing_missed(health, where)


def mi_late_gave_up(ctx, prog):
    """The program's dlsym waits 100 ms for a scan that holds its lock for
    longer (the test knob), then goes on: libmimalloc's calls until the
    publisher's scan redirects it are not seen, and the snapshot says so."""
    proc, snap, where = run_mi_late(ctx, prog, "waitdlsym", {"MEMTOP_TEST_SCAN_HOLD_MS": "1000"})
    health = snap["health"]
    reason = "mimalloc in libmimalloc.so.2: calls before memtop hooked it were not seen"
    check(proc.stdout == "loaded\n", "the program changed: " + where)
    check(health["exact"] is False and reason in (health.get("not_exact") or ""),
          "a dlsym that gave up on the scan: health.not_exact %r does not say %r\n%s" %
          (health.get("not_exact"), reason, where))
    mi = [a for a in health["allocators"] if a["kind"] == "mimalloc"]
    check(len(mi) == 1 and mi[0]["hooked"] and mi[0]["exact"] is False and
          reason in (mi[0]["note"] or ""), "mimalloc's entry: %r\n%s" % (mi, where))
    check(proc.returncode != 0, "--strict passed on a snapshot that is not exact\n" + where)
    check(reason in proc.stderr, "--strict or the target's log did not say %r\n%s" %
          (reason, where))


def mi_late_renamed(ctx, prog):
    cmd = [ctx.args.memtop, "--export", ctx.path("mi_late_renamed.json"), "--"] + [prog, "renamed"]
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    m = re.match(r"eintr plain (\d+) renamed (\d+)\n$", proc.stdout)
    check(proc.returncode == 0 and m, "the program failed: " + where)
    check(int(m.group(1)) >= 1, "the stop did not interrupt the plain sleeper: " + where)
    check(int(m.group(2)) >= 1, "a thread named memtop-publish was not stopped: " + where)


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.mi_dlsym:
        e2elib.fail("mimalloc was not found at configure time: install libmimalloc-dev "
                    "(scripts/install-deps.sh)")
    mi_dlsym(ctx, mine.mi_dlsym)
    if not mine.tcmalloc:
        e2elib.fail("libtcmalloc_minimal.a was not found at configure time: install "
                    "libgoogle-perftools-dev (scripts/install-deps.sh)")
    tc_exact(ctx, "tcmalloc", mine.tcmalloc, True)
    tc_throw(ctx, mine.tcmalloc)
    if not mine.tcmalloc_shared:
        e2elib.fail("libtcmalloc_minimal.so was not found at configure time: install "
                    "libgoogle-perftools-dev (scripts/install-deps.sh)")
    tc_exact(ctx, "tcmalloc-shared", mine.tcmalloc_shared, False)
    mi_late(ctx, mine.mi_late)
    mi_late_renamed(ctx, mine.mi_late)
    mi_late(ctx, mine.mi_late, "smallstack")
    # the publisher's scan of libmimalloc waits for the loader's lock while
    # the program calls dlsym: that dlsym must wait for the redirect
    mi_late(ctx, mine.mi_late, "waitdlsym", {"MEMTOP_TEST_SCAN_LOADER_WAIT_MS": "600"})
    mi_late_gave_up(ctx, mine.mi_late)


if __name__ == "__main__":
    alloclib.run(test)
