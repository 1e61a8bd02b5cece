#!/usr/bin/env python3
"""check_jemalloc.py -- jemalloc, static, shared or _rjem_-prefixed, is hooked exactly.

Why it exists (issue 11): services link jemalloc statically (libjemalloc.a,
tikv-jemallocator's _rjem_ names in Rust) or call its extended API (mallocx,
rallocx, xallocx, sdallocx) from a shared libjemalloc; memtop saw none of it
(heap 0 B) or left malloc+sdallocx pairs live.  memtop now redirects
jemalloc's entry points in memory (its fast path kept, the walk starting at
the program's frame), with its hook API as the fallback.  For each program
the snapshot must say exact, name jemalloc 5.x as hooked ("how": "redirect";
"hook-api" with MEMTOP_TEST_JE_HOOK_API=1, run for the C programs too) with
its own figures, and match, to the byte,
the bytes each named function leaked (frames[0] the program's call, not
jemalloc's insides); the blocks freed in every way (free, dallocx, sdallocx,
malloc+sdallocx, rallocx+sdallocx) must not stay live; output and exit
status stay the program's.  Variants: 4 threads, and a fork child (attached
with -p).  A C++ program on libjemalloc.a (alloc_je_cpp.cc) checks jemalloc's
operators new and delete, some of which call its other entry points: each
block counted once; and sampled (--sample 512k), the same allocation and free
counts as exact; and after a bad_alloc thrown through the redirected
operator new[] (caught), still every block counted.  The same C++ program on
a shared libjemalloc, whose unsized operator delete jumps to free@plt and
aligned operator new calls aligned_alloc@plt (memtop's definitions, from
inside memtop's real call: jemalloc's own calls, once counted again as
unknown frees and untracked blocks).  The Rust program is
built here with rustc against an archive made from Debian's
libjemalloc_pic.a with objcopy --redefine-syms (the _rjem_ names
tikv-jemallocator builds).
"""

import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloclib  # noqa: E402
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

C_LEAKS = {"leak_malloc": 1000, "leak_calloc": 2000, "leak_mallocx": 3000,
           "leak_rallocx": 4000, "leak_xallocx": 32768}
RUST_LEAKS = {"leak_vec": 5000, "leak_box": 2400, "leak_grown": 7000}
CPP_LEAKS = {"leak_new": 1000, "leak_nothrow": 300, "leak_aligned": 128}
PUBLIC = ["malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
          "valloc", "pvalloc", "malloc_usable_size", "mallocx", "rallocx", "xallocx", "sallocx",
          "dallocx", "sdallocx", "nallocx", "mallctl", "mallctlnametomib", "mallctlbymib",
          "malloc_stats_print", "malloc_conf", "malloc_message", "__libc_malloc",
          "__libc_calloc", "__libc_realloc", "__libc_free", "__libc_memalign", "__libc_valloc",
          "__libc_pvalloc", "__posix_memalign"]



def leaked_by(snap, names, what):
    """Live bytes per named function (the first frame naming one), and
    the traces of the free loops that kept anything live."""
    per = {}
    for tr in snap["traces"]:
        if not tr["live_bytes"]:
            continue
        funcs = [f.get("function") or "" for f in tr["frames"]]
        check(funcs and not re.match(r"(_rjem_)?je_|hook_invoke", funcs[0]),
              "%s: frames[0] is inside jemalloc: %r" % (what, funcs[:4]))
        hit = next((n for fn in funcs for n in names if re.search(r"(^|::)%s\b" % n, fn)), None)
        if hit:
            per[hit] = per.get(hit, 0) + tr["live_bytes"]
        check(not any(re.search(r"free_all_ways|churn", fn) for fn in funcs),
              "%s: a freed block stays live: %d bytes at %r" % (what, tr["live_bytes"], funcs[:6]))
    return per


def check_snapshot(snap, names, what, prefix, how="redirect", module=None):
    health = snap["health"]
    check(health["exact"] is True, "%s: not exact: %r" % (what, health.get("not_exact")))
    je = [a for a in health["allocators"] if a["kind"] == "jemalloc"]
    check(len(je) == 1 and je[0]["hooked"] and je[0]["prefix"] == prefix and
          (je[0]["version"] or "").startswith("5.") and isinstance(je[0]["allocated"], int),
          "%s: jemalloc not listed as hooked with its figures: %r" % (what, health["allocators"]))
    check(je[0].get("how") == how, "%s: jemalloc hooked by %r, not %r" %
          (what, je[0].get("how"), how))
    if module:  # the executable is named by its path, not "" nor /proc/self/exe
        check(je[0].get("module") == module, "%s: jemalloc's module %r, not %r" %
              (what, je[0].get("module"), module))
    per = leaked_by(snap, names, what)
    check(per == names, "%s: leaks per function %r, expected %r" % (what, per, names))


def run_export(ctx, name, prog, stdout, env=None, strict=True):
    out = ctx.path(name + ".json")
    cmd = [ctx.args.memtop, "--export", out] + (["--strict"] if strict else []) + ["--"] + prog
    proc = e2elib.run(cmd, env or ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == 0, "exit status changed (or --strict failed): " + where)
    check(proc.stdout == stdout, "output changed: " + where)
    check(not strict or "NOT exact" not in proc.stderr, "the target said NOT exact: " + where)
    return e2elib.load_json(out)


def check_throw(snap, what, how):
    """After the caught bad_alloc every block is counted.  Redirected, the
    one thing missed is the exception object, which libstdc++ allocates
    inside jemalloc's operator new (the thread inside memtop, passing
    through) and frees after the catch: one unknown free, said NOT exact.
    Through the hook API it is counted (jemalloc's hook sees it)."""
    health = snap["health"]
    unknown = 1 if how == "redirect" else 0
    check(health["exact"] is (unknown == 0) and health["unknown_free_count"] == unknown and
          health["untracked_alloc_count"] == 0,
          "%s: expected %d unknown frees (the exception object), and nothing else: %r" %
          (what, unknown, {k: v for k, v in health.items() if k != "allocators"}))
    health["exact"] = True
    check_snapshot(snap, CPP_LEAKS, what, "", how)


def check_sampled_counts(ctx, prog, exact, keys=("alloc_count", "free_count")):
    """Sampled mode counts every call exactly, also on the redirected
    hooks' fast path (an unsampled block skips hook_enter): the same
    deterministic program gives the exact run's allocation and free counts."""
    prog = prog if isinstance(prog, list) else [prog]
    out = ctx.path("sampled.json")
    cmd = [ctx.args.memtop, "--sample", "512k", "--export", out, "--"] + prog
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0 and proc.stdout == "ok\n",
          "sampled run: %s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc)))
    snap = e2elib.load_json(out)
    for key in keys:
        check(snap["totals"][key] == exact["totals"][key],
              "sampled totals.%s %r, exact %r" % (key, snap["totals"][key], exact["totals"][key]))


def build_rust(ctx, pic):
    rustc = shutil.which("rustc")
    if not rustc:
        e2elib.fail("rustc not found: install rustc (scripts/install-deps.sh)")
    with open(ctx.path("rjem.map"), "w") as f:
        f.writelines("%s _rjem_%s\n" % (s, s) for s in PUBLIC)
    lib = ctx.path("librjem.a")
    r = e2elib.run(["objcopy", "--redefine-syms=" + ctx.path("rjem.map"), pic, lib], ctx.env)
    check(r.returncode == 0, "objcopy: " + e2elib.describe(r))
    exe = ctx.path("alloc_rjem")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alloc_rjem.rs")
    cmd = [rustc, "-C", "opt-level=1", "-g", "-C", "panic=abort", src, "-L", ctx.workdir,
           "-l", "static=rjem", "-l", "dylib=pthread", "-l", "dylib=dl", "-l", "dylib=m",
           "-o", exe]
    r = e2elib.run(cmd, ctx.env, timeout=300)
    check(r.returncode == 0, "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(r)))
    return exe


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    for opt in ("je_static", "je_shared", "je_cpp", "jemalloc_pic"):
        if not getattr(mine, opt):
            e2elib.fail("libjemalloc-dev was not found at configure time: install it "
                        "(scripts/install-deps.sh)")
    for name, prog in (("static", mine.je_static), ("shared", mine.je_shared)):
        batch = e2elib.run([ctx.args.memtop, "--batch", "-n", "1", "--", prog], ctx.env)
        check(re.search(r"^heap: .* \| allocator jemalloc 5\.\d+\.\d+%s " %
                        (r" \(static\)" if name == "static" else ""), batch.stdout, re.M),
              "--batch does not name the allocator:\n" + e2elib.describe(batch))
        snap = run_export(ctx, name, [prog], "ok 32768\n")
        check_snapshot(snap, C_LEAKS, name, "",
                       module=os.path.realpath(prog) if name == "static" else None)
        snap = run_export(ctx, name + "-threads", [prog, "threads"], "ok 32768\n")
        check_snapshot(snap, C_LEAKS, name + " with 4 threads", "")
        # the fallback: jemalloc's hook API, as where the redirect is refused
        snap = run_export(ctx, name + "-hook-api", [prog, "threads"], "ok 32768\n",
                          ctx.env_with(MEMTOP_TEST_JE_HOOK_API="1"))
        check_snapshot(snap, C_LEAKS, name + " through the hook API", "", "hook-api")
    child = alloclib.fork_child(ctx, [mine.je_static, "fork"], r"child (\d+) 32768$",
                                ctx.env_with(LD_PRELOAD=ctx.args.preload))
    check_snapshot(child, C_LEAKS, "static, fork child", "")
    snap = run_export(ctx, "cpp", [mine.je_cpp], "ok\n")
    check_snapshot(snap, CPP_LEAKS, "C++ operators", "")
    if mine.je_cpp_shared:  # libjemalloc.so's operators call free and aligned_alloc by name
        shared = run_export(ctx, "cpp-shared", [mine.je_cpp_shared], "ok\n")
        check_snapshot(shared, CPP_LEAKS, "C++ operators of a shared libjemalloc", "")
    check_sampled_counts(ctx, mine.je_cpp, snap)
    # bad_alloc thrown through the redirected operator new[] (and through
    # the hook API's): the thread leaves memtop all the same, its later
    # blocks counted, also on sampled mode's fast path
    snap = run_export(ctx, "cpp-throw", [mine.je_cpp, "throw"], "ok\n", strict=False)
    check_throw(snap, "C++ operators after bad_alloc", "redirect")
    # (sampled mode's fast path counts the exception object's free, which
    # exact mode calls unknown: as for any block memtop never saw)
    check_sampled_counts(ctx, [mine.je_cpp, "throw"], snap, ("alloc_count",))
    snap = run_export(ctx, "cpp-throw-hook-api", [mine.je_cpp, "throw"], "ok\n",
                      ctx.env_with(MEMTOP_TEST_JE_HOOK_API="1"), strict=False)
    check_throw(snap, "C++ operators after bad_alloc, hook API", "hook-api")
    snap = run_export(ctx, "cpp-hook-api", [mine.je_cpp], "ok\n",
                      ctx.env_with(MEMTOP_TEST_JE_HOOK_API="1"))
    check_snapshot(snap, CPP_LEAKS, "C++ operators through the hook API", "", "hook-api")
    exe = build_rust(ctx, mine.jemalloc_pic)
    snap = run_export(ctx, "rust", [exe], "ok\n")
    check_snapshot(snap, RUST_LEAKS, "rust _rjem_", "_rjem_")
    snap = run_export(ctx, "rust-threads", [exe, "threads"], "ok\n")
    check_snapshot(snap, RUST_LEAKS, "rust _rjem_ with 4 threads", "_rjem_")


if __name__ == "__main__":
    alloclib.run(test)
