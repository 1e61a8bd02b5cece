#!/usr/bin/env python3
"""check_je_late.py -- a jemalloc linked into a library loaded with dlopen after start.

Why it exists (issue 11): a library may carry an allocator of its own
(jemalloc linked in, its names prefixed and hidden), and a service may load
it late, with threads running.  memtop must find that jemalloc at the load,
hook it, and count its blocks to the byte: alloc_je_late loads
alloc_je_late_lib.so (Debian's libjemalloc_pic.a with its public names
prefixed _ljem_) while two threads allocate through malloc and one sleeps,
then leaks known bytes through it from named functions and frees the rest
in every way, from one thread, from four, in a fork child, and loaded by
a relative path ("./lib.so": the scan used to skip every module whose
name does not start with '/', meaning the vdso).  The data
must say exact, the library's jemalloc hooked.  And what the library's
constructor allocated before memtop could hook it (inside dlopen) must
not pass for exact: the data says NOT exact with how many bytes, and
--strict fails (docs/allocators.md, "When").
The loader's static TLS reserve is raised (GLIBC_TUNABLES), as in
check_je_fork.py: jemalloc's initial-exec TLS does not fit glibc's default
reserve for libraries loaded with dlopen.
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

LEAKS = {"lj_leak_malloc": 1000, "lj_leak_calloc": 2000, "lj_leak_mallocx": 3000,
         "lj_leak_rallocx": 4000}
LIB = "liballoc_je_late_lib"
TLS = "glibc.rtld.optional_static_tls=65536"


def leaked_by(snap, what):
    """Live bytes per lj_ function (frames[0] must be it: jemalloc's own
    frames trimmed); a freed block left live fails."""
    per = {}
    for tr in snap["traces"]:
        funcs = [f.get("function") or "" for f in tr["frames"]]
        if not tr["live_bytes"] or not any(fn.startswith("lj_") for fn in funcs):
            continue
        check(funcs[0] in LEAKS or funcs[0] == "lj_ctor_leak",
              "%s: frames[0] is not the library's call: %r" % (what, funcs[:4]))
        check(funcs[0] != "lj_free_all_ways",
              "%s: a freed block stays live: %d bytes" % (what, tr["live_bytes"]))
        per[funcs[0]] = per.get(funcs[0], 0) + tr["live_bytes"]
    return per


def late_jemalloc(health, what):
    je = [a for a in health["allocators"] if a["kind"] == "jemalloc"]
    check(len(je) == 1 and je[0]["hooked"] and je[0]["prefix"] == "_ljem_" and
          je[0]["static"] and LIB in (je[0]["module"] or "") and
          (je[0]["version"] or "").startswith("5.") and isinstance(je[0]["allocated"], int),
          "%s: the library's jemalloc is not listed as hooked: %r" % (what, health["allocators"]))
    return je[0]


def check_exact(snap, copies, what):
    health = snap["health"]
    check(health["exact"] is True, "%s: not exact: %r" % (what, health.get("not_exact")))
    alloclib.check_nothing_missed(health, what)
    late_jemalloc(health, what)
    want = {k: v * copies for k, v in LEAKS.items()}
    per = leaked_by(snap, what)
    check(per == want, "%s: leaks per function %r, expected %r" % (what, per, want))


def run_export(ctx, name, args, env, want_rc):
    out = ctx.path(name + ".json")
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--"] + args
    proc = e2elib.run(cmd, env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    check(proc.returncode == want_rc, "exit status %d, expected %d: %s" %
          (proc.returncode, want_rc, where))
    check(proc.stdout == "ok\n", "output changed: " + where)
    return e2elib.load_json(out), proc


def test():
    mine, args = alloclib.parse(__doc__.splitlines()[1])
    ctx = e2elib.Ctx(args)
    if not mine.je_late or not mine.je_late_lib:
        e2elib.fail("libjemalloc-dev (libjemalloc_pic.a) was not found at configure time: "
                    "install it (scripts/install-deps.sh)")
    prog = [mine.je_late, mine.je_late_lib]
    plain = ctx.env_with(GLIBC_TUNABLES=TLS)
    snap, _ = run_export(ctx, "one", prog, plain, 0)
    check_exact(snap, 1, "one thread")
    snap, _ = run_export(ctx, "threads", prog + ["threads"], plain, 0)
    check_exact(snap, 4, "4 threads")
    snap, _ = run_export(ctx, "relative", prog + ["relative"], plain, 0)
    check_exact(snap, 1, "loaded by a relative path")
    child = alloclib.fork_child(ctx, prog + ["fork"], r"child (\d+)$",
                                ctx.env_with(LD_PRELOAD=ctx.args.preload, GLIBC_TUNABLES=TLS))
    check_exact(child, 1, "fork child")
    # the constructor's 5000 bytes: allocated inside dlopen, before memtop
    # could hook the library's jemalloc
    env = ctx.env_with(GLIBC_TUNABLES=TLS, ALLOC_JE_LATE_CTOR="1")
    snap, proc = run_export(ctx, "ctor", prog, env, 3)
    health = snap["health"]
    je = late_jemalloc(health, "constructor")
    note = je.get("note") or ""
    m = re.search(r"jemalloc \(_ljem_\) in %s\.so: (\d+) bytes allocated before memtop hooked it"
                  % LIB, note)
    check(m and int(m.group(1)) >= 5000 and je["exact"] is False,
          "the constructor's blocks are not reported: %r" % je)
    check(health["exact"] is False and note in (health.get("not_exact") or ""),
          "health does not say NOT exact for them: %r" % health.get("not_exact"))
    check("NOT exact: " + note in proc.stderr, "the target did not log it:\n" + proc.stderr)
    want = dict(LEAKS)
    check(leaked_by(snap, "constructor") == want,
          "constructor: the later leaks are not counted as before: %r" %
          leaked_by(snap, "constructor"))
    batch = e2elib.run([ctx.args.memtop, "--batch", "-n", "1", "--"] + prog, env)
    check(re.search(r"^data: NOT exact: .*bytes allocated before memtop hooked it", batch.stdout,
                    re.M), "--batch does not say it:\n" + e2elib.describe(batch))


if __name__ == "__main__":
    alloclib.run(test)
