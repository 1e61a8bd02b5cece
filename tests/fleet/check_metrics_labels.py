#!/usr/bin/env python3
"""check_metrics_labels.py -- /metrics' location labels of a C++ target are short and distinct.

Why it exists: the `location` label of the per-trace series was the frame's
whole demangled name, and a C++ template member's runs over 300 bytes
(every template argument, then the parameter list): label values that
long break dashboards, legends and cardinality tools.  The label is now
the name with template arguments elided to <...> and no parameter list,
then " (file:line)", valid UTF-8 of at most 120 bytes (docs/fleet.md).

names_cxx.cpp (built here with g++) keeps blocks from a member of a
deeply nested class template and from two overloads of fleet::grab, and
waits; `memtop --serve --top 50` must then serve, for its every trace, a
location of at most 120 bytes, "fleet::Store<...>::put (names_cxx.cpp:N)"
for the template site and the two overloads apart by their lines; no two
samples of /metrics may be the same series (Prometheus would reject the
scrape), and every trace keeps its own trace_id.  Skipped (77) without g++.
"""

import os
import re

import fleetlib
from fleetlib import check, e2elib

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 120
SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def series(text):
    """[(name, ((label, value), ...))] of every sample line, in order."""
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = SAMPLE.match(line)
            check(m, "not a sample line: %r" % line)
            labels = tuple(sorted((k, unescape(v)) for k, v in LABEL.findall(m.group(2) or "")))
            out.append((m.group(1), labels))
    return out


def trace_series(all_series, pid):
    return [dict(labels) for name, labels in all_series if name == "memtop_trace_live_bytes" and
            dict(labels).get("pid") == str(pid)]


def test(args):
    gxx = fleetlib.need("g++", "g++")
    ctx = e2elib.Ctx(args)
    exe = ctx.path("names_cxx")
    proc = e2elib.run([gxx, "-O0", "-g", "-fno-inline", "-fno-omit-frame-pointer",
                       os.path.join(HERE, "names_cxx.cpp"), "-o", exe], ctx.env, timeout=300)
    check(proc.returncode == 0, "g++ failed:\n%s" % e2elib.describe(proc))
    target = e2elib.start_preloaded(ctx, [exe, "hold"])
    serve = None
    try:
        e2elib.wait_segment(ctx, target)
        serve, base = fleetlib.start_serve(ctx, args, "--top", "50")

        def scraped():
            status, _, body = fleetlib.http_get(base + "/metrics")
            check(status == 200, "/metrics: %s" % status)
            s = series(body.decode("utf-8"))
            traces = trace_series(s, target.pid)
            sites = [t["location"] for t in traces]
            return (s, traces) if any(x.startswith("fleet::Store") for x in sites) else None

        all_series, traces = e2elib.wait_for(scraped, "the template site's series", timeout=30,
                                             step=0.3)
        dup = {s for s in all_series if all_series.count(s) > 1}
        check(not dup, "/metrics has the same series twice: %r" % sorted(dup)[:3])
        ids = [t["trace_id"] for t in traces]
        check(len(set(ids)) == len(ids), "two trace series share a trace_id: %r" % ids)
        locations = sorted({v for _, labels in all_series for k, v in labels if k == "location"})
        long = [(len(v.encode()), v) for v in locations if len(v.encode()) > BOUND]
        check(not long, "location labels over %d bytes: %r" % (BOUND, long[:3]))
        for what, pattern in (("the template member", r"fleet::Store<\.\.\.>::put \(names_cxx\.cpp:\d+\)$"),
                              ("grab(int)", r"fleet::grab \(names_cxx\.cpp:19\)$"),
                              ("grab(std::string const&)", r"fleet::grab \(names_cxx\.cpp:20\)$")):
            check(any(re.match(pattern, v) for v in locations),
                  "no location label of %s (%s) in:\n%s" % (what, pattern, "\n".join(locations)))
        print("ok: %d trace series of pid %d, %d distinct locations, the longest %d bytes "
              "(bound %d); no series twice" % (len(traces), target.pid, len(locations),
                                               max(len(v.encode()) for v in locations), BOUND))
    finally:
        for p in (serve, target):
            if p:
                e2elib.stop(p)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
