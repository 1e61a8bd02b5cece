#!/usr/bin/env python3
"""check_pprof_names.py -- pprof Function names of C++ and Rust programs.

Why it exists: profile.proto's Function.name is the readable name and
Function.system_name the symbol's (mangled) linkage name.  memtop put its
demangled name in both, so pprof took the name for one still to demangle
and "simplified" it by cutting every (...) and <...>: Rust's
<alloc::string::String as core::clone::Clone>::clone became "::clone" (and
merged with every other trait impl's clone), fleet::grab(int) and
fleet::grab(std::string const&) merged into one "fleet::grab", and the
mangled name was lost to Parca/Pyroscope.

names_cxx.cpp (built with g++) and names_rust.rs (built with rustc) run
under `memtop --export X.pb.gz -- PROG`.  Each profile, decoded by protoc,
must name the template member, both overloads, the generic and closure
functions and the trait impl, each with system_name its mangled symbol
(c++filt of it, less Rust's ::h<hash> and
[crate id], is the name); then `go tool pprof
-top` and `-traces` (default symbolization) must show those names whole.
Skipped (77) when g++, rustc, c++filt, protoc or go is missing.
"""

import os
import re

import fleetlib
from fleetlib import check, e2elib

HERE = os.path.dirname(os.path.abspath(__file__))
RUST_HASH = re.compile(r"::h[0-9a-f]{16}$|\[[0-9a-f]+\]")  # legacy hash, v0 crate id

CXX_NAMES = [  # (what, predicate on a name)
    ("fleet::grab(int)", lambda n: n == "fleet::grab(int)"),
    ("fleet::grab(std::string const&)",
     lambda n: n.startswith("fleet::grab(std::__cxx11::basic_string<char")),
    ("fleet::Store<...>::put(...)",
     lambda n: n.startswith("fleet::Store<std::__cxx11::basic_string<") and ">::put(" in n),
]
RUST_NAMES = [
    ("names_rust::make", lambda n: n == "names_rust::make"),
    ("names_rust::Bag<T>::push_many", lambda n: n == "names_rust::Bag<T>::push_many"),
    ("names_rust::main::{{closure}}", lambda n: n == "names_rust::main::{{closure}}"),
    ("<String as Clone>::clone", lambda n: n == "<alloc::string::String as core::clone::Clone>::clone"),
]


def build(ctx, tool, package, cmd, exe):
    path = fleetlib.need(tool, package)
    proc = e2elib.run([path] + cmd + ["-o", exe], ctx.env, timeout=300)
    check(proc.returncode == 0, "%s failed:\n%s" % (tool, e2elib.describe(proc)))
    return exe


def demangle(ctx, names):
    """c++filt of each name (which keeps Rust's hashes and crate ids)."""
    proc = e2elib.run([fleetlib.need("c++filt", "binutils")] + names, ctx.env)
    check(proc.returncode == 0, "c++filt failed:\n%s" % e2elib.describe(proc))
    return proc.stdout.splitlines()


def check_functions(ctx, prof, wanted, stem):
    """Each wanted name is a Function whose system_name is its mangled symbol."""
    fns = {i: (name, prof.system_names[i]) for i, (name, _) in prof.functions.items()}
    mangled = [(n, s) for n, s in fns.values() if s != n]
    check(mangled, "%s: no Function has a system_name other than its name: %r" %
          (stem, sorted(fns.values())[:10]))
    for (name, sys_name), plain in zip(mangled, demangle(ctx, [s for _, s in mangled])):
        check(re.match(r"_Z|_R", sys_name), "%s: %r has system_name %r, not a mangled symbol" %
              (stem, name, sys_name))
        check(RUST_HASH.sub("", plain) == name, "%s: system_name %r demangles to %r, name %r" %
              (stem, sys_name, plain, name))
    for what, pred in wanted:
        found = [(n, s) for n, s in fns.values() if pred(n)]
        check(found, "%s: no Function named %s in %r" % (stem, what, sorted(n for n, _ in fns.values())))
        check(all(s != n for n, s in found), "%s: %s has no mangled system_name: %r" %
              (stem, what, found))
    print("ok: %s: %d Functions have their mangled system_name; %s named right" %
          (stem, len(mangled), ", ".join(w for w, _ in wanted)))


def go_pprof(ctx, path, report):
    go = fleetlib.need("go", "golang-go")
    env = ctx.env_with(HOME=ctx.workdir, PPROF_TMPDIR=ctx.workdir, GOCACHE=ctx.path("gocache"),
                       PPROF_BINARY_PATH=ctx.path("nobinaries"))
    proc = e2elib.run([go, "tool", "pprof", report, path], env, timeout=120)
    check(proc.returncode == 0, "go tool pprof %s failed:\n%s" % (report, e2elib.describe(proc)))
    return proc.stdout


def top_names(text):
    """The function names of go tool pprof -top's rows."""
    rows = re.findall(r"^\s*\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.*)$", text, re.M)
    return [re.sub(r" \((partial-)?inline\)$", "", r) for r in rows]


def trace_names(text):
    """The function names of go tool pprof -traces' frames (a leaf's row
    starts with its value)."""
    rows = re.findall(r"^[ \S]{10} {3}(\S.*)$", text, re.M)
    return [re.sub(r" \((partial-)?inline\)$", "", r) for r in rows]


def check_go(ctx, path, wanted, stem):
    top = go_pprof(ctx, path, "-top")
    names = top_names(top)
    check(names, "%s: no rows in go tool pprof -top:\n%s" % (stem, top[:3000]))
    cut = [n for n in names if n.startswith("::")]
    check(not cut, "%s: go tool pprof -top shows names cut to their tail: %r" % (stem, cut[:10]))
    for what, pred in wanted:
        check(any(pred(n) for n in names), "%s: go tool pprof -top has no row %s:\n%s" %
              (stem, what, "\n".join(n[:200] for n in names)))
    traces = trace_names(go_pprof(ctx, path, "-traces"))
    for what, pred in wanted:
        check(any(pred(n) for n in traces),
              "%s: go tool pprof -traces never names %s" % (stem, what))
    print("ok: %s: go tool pprof -top and -traces show %s whole" %
          (stem, ", ".join(w for w, _ in wanted)))


def profile(ctx, args, prog, stem):
    out = ctx.path(stem + ".pb.gz")
    proc = e2elib.run([args.memtop, "--export", out, "--top", "0", "--", prog],
                      ctx.env_with(MEMTOP_TEMP_MS=0))
    check(proc.returncode == 0, "memtop --export -- %s:\n%s" % (prog, e2elib.describe(proc)))
    return out


def test(args):
    for tool, package in (("protoc", "protobuf-compiler"), ("go", "golang-go"),
                          ("c++filt", "binutils"), ("g++", "g++"), ("rustc", "rustc")):
        fleetlib.need(tool, package)
    ctx = e2elib.Ctx(args)
    cxx = build(ctx, "g++", "g++", ["-O0", "-g", "-fno-inline", "-fno-omit-frame-pointer",
                                    os.path.join(HERE, "names_cxx.cpp")], ctx.path("names_cxx"))
    rust = build(ctx, "rustc", "rustc", ["-g", "-C", "opt-level=0", "-C", "force-frame-pointers=yes",
                                         "--edition", "2021", os.path.join(HERE, "names_rust.rs")],
                 ctx.path("names_rust"))
    for prog, wanted, stem in ((cxx, CXX_NAMES, "c++"), (rust, RUST_NAMES, "rust")):
        path = profile(ctx, args, prog, stem)
        check_functions(ctx, fleetlib.decode_pprof(path), wanted, stem)
        check_go(ctx, path, wanted, stem)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
