#!/usr/bin/env python3
"""Rows that share a LOCATION are told apart by their callers.

same_site.c's helper make_label allocates for four callers: four traces
whose location is the same "make_label (same_site.c:N)".  Printed alone,
those rows (--batch, the text export) cannot be told apart; each must name
the callers that make it its own: "make_label (...) <- parse_config (...)",
or, past the shared via_table, "... <- via_table (...) <- start_a (...)".
The JSON keeps "location" as it is and adds "location_callers" (those
callers, [] for a row no other shares).  Only rows shown together count:
with --top 2, the one make_label row shown has nothing to be told from.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check  # noqa: E402

SITE = re.compile(r"^make_label \(same_site\.c:\d+\)$")
ROW = re.compile(r"^\s*\S+ \S+\s+\d+\s+\d+\s+\d+\s+\S+ \S+\s+\d+\s+(.*)$")  # LIVE .. LEAK LOCATION


WANT = {  # the callers each make_label row must name, as batch text
    "parse_config": r"parse_config \(same_site\.c:\d+\)",
    "load_plugins": r"load_plugins \(same_site\.c:\d+\)",
    "start_a": r"via_table \(same_site\.c:\d+\) <- start_a \(same_site\.c:\d+\)",
    "start_b": r"via_table \(same_site\.c:\d+\) <- start_b \(same_site\.c:\d+\)",
}


def rows_of(out):
    """The LOCATION cells of the last table of a --batch report."""
    lines = out.splitlines()
    head = max(i for i, ln in enumerate(lines) if "LOCATION" in ln)
    cells = []
    for ln in lines[head + 1:]:
        m = ROW.match(ln)
        if not m:
            break
        cells.append(m.group(1))
    return cells


def check_texts(what, texts):
    """texts: the location texts of a whole report: one per caller, all distinct."""
    site = [t for t in texts if t.startswith("make_label (")]
    check(len(site) == 4 and len(set(site)) == 4,
          "%s: expected 4 distinct make_label rows, got %r" % (what, texts))
    for name, pat in WANT.items():
        rx = re.compile(r"^make_label \(same_site\.c:\d+\) <- %s$" % pat)
        check(any(rx.match(t) for t in site), "%s: no row names %s: %r" % (what, name, site))
    lone = [t for t in texts if t.startswith("lone_site (")]
    check(len(lone) == 1 and " <- " not in lone[0],
          "%s: lone_site, alone at its location, must name no caller: %r" % (what, lone))
    print("ok: %s: %s" % (what, " | ".join(site)))


def main():
    a = symlib.setup(__doc__)
    exe = os.path.join(a.workdir, "same_site")
    symlib.run([a.cc, "-O0", "-g", "-o", exe, os.path.join(a.source_dir, "same_site.c")])

    out = symlib.run([a.memtop, "--batch", "--top", "0", "--", exe], env=a.env).stdout
    check_texts("--batch", rows_of(out))

    txt = os.path.join(a.workdir, "same_site.txt")
    symlib.run([a.memtop, "--export", txt, "--", exe], env=a.env)
    with open(txt) as f:
        locs = re.findall(r"^   location: (.*)$", f.read(), re.M)
    check_texts("text export", locs)

    snap = symlib.export(a, "same_site", [exe])
    traces = [t for t in snap["traces"] if t["location"] and SITE.match(t["location"])]
    check(len(traces) == 4, "JSON: expected 4 traces located at make_label (as is), got %r" %
          [t["location"] for t in snap["traces"]])
    got = sorted(" <- ".join(t["location_callers"]) for t in traces)
    for name, pat in WANT.items():
        check(any(re.match("^%s$" % pat, g) for g in got),
              "JSON: no location_callers naming %s: %r" % (name, got))
    lone = [t for t in snap["traces"] if (t["location"] or "").startswith("lone_site (")]
    check(len(lone) == 1 and lone[0]["location_callers"] == [],
          "JSON: lone_site's location_callers must be []: %r" % lone)
    print("ok: JSON location_callers %r" % got)

    # --top 2: lone_site (4000 B) and make_label's biggest (load_plugins,
    # 107 B): no other row shown shares its location
    out = symlib.run([a.memtop, "--batch", "--top", "2", "--", exe], env=a.env).stdout
    cells = rows_of(out)
    check(len(cells) == 2 and SITE.match(cells[1]),
          "--top 2: the make_label row shown alone must name no caller: %r" % cells)
    print("ok: --top 2: %r" % cells)
    symlib.passed()


if __name__ == "__main__":
    main()
