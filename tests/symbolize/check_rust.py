#!/usr/bin/env python3
"""A Rust program built with `rustc -O -g` (user code mangled the legacy
way, std the v0 way) runs under memtop.  No name in the JSON export may
stay mangled (_ZN/_R prefixes, ::h<16 hex> suffixes), and the location
shown for the program's allocations, in the JSON, the CSV and --batch, is
user code (a function of the program, not alloc::/RawVec/__rust_alloc).
Skipped (77) when rustc is missing."""
import csv
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check  # noqa: E402

USER = "sym_rust::work::"
SITES = ["grow_vec", "boxed", "build_string", "fill_map", "format_lines", "repeat_str"]
PLUMBING = ("alloc::", "core::", "__rust_alloc", "__rdl_alloc", "__rg_alloc", "hashbrown::",
            "std::alloc::")


def mangling_schemes(exe):
    out = subprocess.run(["nm", exe], stdout=subprocess.PIPE, universal_newlines=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.split()]
    return any(s.startswith("_ZN") for s in syms), any(s.startswith("_R") for s in syms)


def user_traces(snap, exe):
    """Traces whose stack goes through the program's work:: functions."""
    return [t for t in snap["traces"]
            if any(fr["module"] == exe and (fr["function"] or "").startswith(USER)
                   for fr in t["frames"])]


def main():
    a = symlib.setup(__doc__)
    rustc = shutil.which("rustc")
    if not rustc:
        symlib.skip("rustc is not installed")
    exe = os.path.realpath(os.path.join(a.workdir, "sym_rust"))
    symlib.run([rustc, "-O", "-g", "--edition", "2021", "-o", exe,
                os.path.join(a.source_dir, "sym_rust.rs")], timeout=240)
    legacy, v0 = mangling_schemes(exe)
    print("symbols: legacy (_ZN) %s, v0 (_R) %s" % (legacy, v0))

    snap = symlib.export(a, "rust", [exe])
    names = [fr["function"] for t in snap["traces"] for fr in t["frames"] if fr["function"]]
    check(names, "no frame was symbolized")
    bad = sorted({n for n in names if symlib.mangled(n)})
    check(not bad, "names still mangled: %r" % bad[:10])
    print("ok: %d names, none mangled" % len(names))

    traces = user_traces(snap, exe)
    check(traces, "no trace goes through %s" % USER)
    wrong = [(t["id"], t["location"]) for t in traces if USER not in (t["location"] or "")]
    check(not wrong, "JSON locations that are not user code: %r" % wrong)
    found = {s for s in SITES for t in traces if USER + s in t["location"]}
    check(found == set(SITES), "user sites never shown as a location: %r" % (set(SITES) - found))
    print("ok: JSON: %d user traces, all located in user code" % len(traces))

    ids = {t["id"] for t in traces}
    out = os.path.join(a.workdir, "rust.csv")
    symlib.run([a.memtop, "--export", out, "--", exe], env=a.env)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    check(rows and "location" in rows[0], "CSV has no location column")
    user_rows = [r for r in rows if USER in r["location"]]
    check(len(user_rows) >= len(SITES), "CSV: only %d rows located in user code: %r" %
          (len(user_rows), [r["location"] for r in rows]))

    batch = symlib.run([a.memtop, "--batch", "--top", "0", "--", exe], env=a.env).stdout
    report = batch.split("LOCATION")[-1]
    for s in SITES:
        check(USER + s in report, "--batch: no row located in %s%s:\n%s" % (USER, s, report))
    for line in report.splitlines()[1:]:
        tail = line.split("B/s", 1)[-1].split(None, 1)  # LEAK, then the location
        where = tail[1].strip().lstrip("<") if len(tail) > 1 else ""
        check(not where.startswith(PLUMBING), "--batch row located in plumbing: %s" % line)
    print("ok: --batch and CSV rows located in user code (%d user traces: %s)" %
          (len(ids), sorted(found)))
    symlib.passed()


main()
