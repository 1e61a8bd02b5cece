#!/usr/bin/env python3
"""A C and a C++ program built -O2 -g (always_inline helpers that allocate,
a template in a namespace, static functions, std::vector growth) run under
`memtop --export`.  Every frame of every trace (function, file, line and the
chain of inlined frames) must equal what `eu-addr2line -i -f -C -e MODULE
OFFSET` says for the same address, and each trace's location must be in the
program's own source file."""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check, fail  # noqa: E402

LOC = re.compile(r"^(.*?):(\d+)(?::\d+)?$")


def addr2line(module, offset):
    """[(function or None, file or None, line or None)], innermost first."""
    p = symlib.run(["eu-addr2line", "-i", "-f", "-C", "-e", module, offset], ok=None)
    lines = p.stdout.splitlines()
    check(lines and len(lines) % 2 == 0,
          "eu-addr2line %s %s: unexpected output %r" % (module, offset, p.stdout))
    out = []
    for i in range(0, len(lines), 2):
        name = lines[i].split(" inlined at ")[0]
        m = LOC.match(lines[i + 1])
        f, ln = (m.group(1), int(m.group(2))) if m else (None, None)
        if f == "??":
            f = None
        out.append((None if name == "??" else name, f, ln or None))
    return out


def compare(snap, what):
    checked, cache, errs = 0, {}, []
    for t in snap["traces"]:
        for addr, module, offset, chain in symlib.chains(t):
            if not module or not module.startswith("/"):
                continue
            key = (module, offset)
            if key not in cache:
                cache[key] = addr2line(module, offset)
            want = cache[key]
            got = [(f["function"], f["file"], f["line"]) for f in chain]
            if got != want:
                errs.append("%s+%s: memtop %r, eu-addr2line %r" % (module, offset, got, want))
            flags = [f["inlined"] for f in chain]
            if flags != [True] * (len(chain) - 1) + [False]:
                errs.append("%s+%s: inlined flags %r" % (module, offset, flags))
            checked += 1
    check(not errs, "%s: %d of %d frames differ:\n  %s" % (what, len(errs), checked,
                                                           "\n  ".join(errs[:20])))
    print("ok: %s: %d frames equal eu-addr2line -i -f -C" % (what, checked))


def made_by_program(t, exe):
    """The program called the allocator (directly, or through operator new
    in libstdc++), not a library on its own behalf (stdio's buffer)."""
    for fr in t["frames"]:
        if fr["module"] == exe:
            return True
        if not os.path.basename(fr["module"] or "").startswith("libstdc++"):
            return False
    return False


def check_locations(snap, exe, source, want_functions):
    seen = set()
    for t in snap["traces"]:
        if not made_by_program(t, exe):
            continue
        own = [fr for fr in t["frames"] if fr["file"] and fr["file"].endswith(source)]
        if not own:
            continue
        loc = t["location"]
        check(loc and ("(%s:" % source) in loc,
              "trace %d: location %r is not in %s (frames: %r)" %
              (t["id"], loc, source, [fr["function"] for fr in t["frames"]]))
        seen.add(loc.split(" (")[0])
    missing = [f for f in want_functions if not any(f in s for s in seen)]
    check(not missing, "no trace located in %r; locations: %r" % (missing, sorted(seen)))
    print("ok: %s locations: %s" % (source, sorted(seen)))


def expect_inline(snap, exe, inner, outer):
    for t in snap["traces"]:
        for _, module, _, chain in symlib.chains(t):
            names = [f["function"] or "" for f in chain]
            if module == exe and len(chain) >= 2 and inner in names[0] and outer in names[-1]:
                return
    fail("no frame of %s shows %s inlined into %s" % (exe, inner, outer))


def build(a, compiler, src, out):
    exe = os.path.join(a.workdir, out)
    symlib.run([compiler, "-O2", "-g", "-o", exe, os.path.join(a.source_dir, src)])
    return os.path.realpath(exe)


def main():
    a = symlib.setup(__doc__)
    if not shutil.which("eu-addr2line"):
        symlib.skip("eu-addr2line (elfutils) is not installed")
    cexe = build(a, a.cc, "sym_c.c", "sym_c")
    snap = symlib.export(a, "c", [cexe])
    compare(snap, "C")
    expect_inline(snap, cexe, "inline_make", "exported_make")
    check_locations(snap, cexe, "sym_c.c", ["inline_make", "static_make"])

    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        symlib.skip("no C++ compiler")
    xexe = build(a, cxx, "sym_cxx.cpp", "sym_cxx")
    snap = symlib.export(a, "cxx", [xexe])
    compare(snap, "C++")
    expect_inline(snap, xexe, "inline_create", "exported_create")
    check_locations(snap, xexe, "sym_cxx.cpp",
                    ["symtest::make_array<int>", "symtest::make_array<double>", "static_grow",
                     "inline_create", "keyed", "lambdas", "std::hash<Key>::operator()"])
    symlib.passed()


main()
