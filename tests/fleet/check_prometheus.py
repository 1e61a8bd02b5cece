#!/usr/bin/env python3
"""check_prometheus.py -- a real Prometheus scrapes `memtop --serve` and stores memtop's numbers.

Why it exists: the exporter is for the Prometheus servers fleets already run.
fleet-leaker leaks from leak_site() and then holds its heap still; `memtop
--serve` runs on 127.0.0.1; Debian's `prometheus` scrapes it every second
(temporary storage, its own port on 127.0.0.1).  The test then asks
Prometheus's HTTP API for the target's memtop_* series and finds the values
of `memtop -p PID --export x.json`: live bytes and blocks, allocations, the
exactness flag, and per top trace (trace_id, location) its live bytes;
leak_site's trace grows.  `promtool check metrics` must pass on /metrics in
the text format, and the OpenMetrics answer must end in "# EOF".  A second
leaker runs from a file whose name is not UTF-8 (Prometheus refuses a whole
scrape over one such label): its exe label must be the JSON's (U+FFFD).  A
third, sampled, must read memtop_data_exact 0.
"""

import json
import os
import shutil
import subprocess
import time
import urllib.parse

import fleetlib
from fleetlib import check, e2elib

CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: memtop
    static_configs:
      - targets: ['%s']
"""


def start_prometheus(ctx, target):
    prom = fleetlib.need("prometheus", "prometheus")
    port = fleetlib.free_port()
    with open(ctx.path("prometheus.yml"), "w") as f:
        f.write(CONFIG % target)
    cmd = [prom, "--config.file=" + ctx.path("prometheus.yml"),
           "--storage.tsdb.path=" + ctx.path("tsdb"), "--web.listen-address=127.0.0.1:%d" % port,
           "--log.level=warn"]
    log = open(ctx.path("prometheus.log"), "w")
    proc = subprocess.Popen(cmd, cwd=ctx.workdir, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT)
    return proc, "http://127.0.0.1:%d" % port


def query(api, expr):
    """The instant vector of expr: [(labels, value)]; [] while not there."""
    try:
        status, _, body = fleetlib.http_get(api + "/api/v1/query?query=" +
                                            urllib.parse.quote(expr), timeout=5)
    except OSError:
        return []
    if status != 200:
        return []
    data = json.loads(body)
    return [(r["metric"], float(r["value"][1])) for r in data["data"]["result"]]


def check_promtool(ctx, base):
    promtool = fleetlib.need("promtool", "prometheus")
    status, ctype, body = fleetlib.http_get(base + "/metrics")
    check(status == 200 and ctype.startswith("text/plain; version=0.0.4"),
          "/metrics: %s %s" % (status, ctype))
    proc = subprocess.run([promtool, "check", "metrics"], input=body, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    check(proc.returncode == 0, "promtool check metrics failed:\n%s" % proc.stdout.decode())
    status, ctype, om = fleetlib.http_get(
        base + "/metrics", {"Accept": "application/openmetrics-text;version=1.0.0,*/*;q=0.1"})
    check(status == 200 and ctype.startswith("application/openmetrics-text") and
          om.endswith(b"# EOF\n"), "OpenMetrics answer: %s %s ...%r" % (status, ctype, om[-40:]))
    print("ok: promtool check metrics passes; OpenMetrics when asked")


def expected(snap, pid):
    """{PromQL selector: value} that Prometheus must hold for the JSON snap."""
    t, sel = snap["totals"], '{pid="%d"}' % pid
    want = {"memtop_live_bytes" + sel: t["live_bytes"], "memtop_live_blocks" + sel: t["live_count"],
            "memtop_allocations_total" + sel: t["alloc_count"],
            "memtop_freed_bytes_total" + sel: t["free_bytes"],
            "memtop_data_exact" + sel: 1 if snap["health"]["exact"] else 0}
    if t["rss_bytes"] is not None:
        want["memtop_traces" + sel] = t["trace_count"]
    return want


def wait_matching(api, want, what):
    """Polls until every selector of want has its value; returns the last results."""
    def all_match():
        got = {expr: query(api, expr) for expr in want}
        ok = all(len(v) == 1 and v[0][1] == want[e] for e, v in got.items())
        return got if ok else None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = all_match()
        if got:
            return got
        time.sleep(0.5)
    fail_got = {e: query(api, e) for e in want}
    e2elib.fail("Prometheus never held %s: want %r, got %r" % (what, want, fail_got))


def check_traces(api, snap, pid):
    series = query(api, 'memtop_trace_live_bytes{pid="%d"}' % pid)
    check(series, "no memtop_trace_live_bytes series for pid %d" % pid)
    by_id = {str(tr["id"]): tr for tr in snap["traces"]}
    for labels, value in series:
        tr = by_id.get(labels.get("trace_id"))
        check(tr is not None, "series for unknown trace %r" % labels)
        check(value == tr["live_bytes"] and labels.get("location") == tr["location"],
              "trace %s: Prometheus %s at %r, JSON %d at %r" %
              (tr["id"], value, labels.get("location"), tr["live_bytes"], tr["location"]))
    check(len(series) == min(10, len(snap["traces"])),
          "%d trace series, want the top %d" % (len(series), min(10, len(snap["traces"]))))
    grow = query(api, 'memtop_trace_growth_bytes_per_second{pid="%d",location=~"leak_site.*"}' % pid)
    check(len(grow) == 1 and grow[0][1] > 0, "leak_site's growth in Prometheus: %r" % grow)
    print("ok: %d trace series match the JSON; leak_site grows at %.0f B/s" %
          (len(series), grow[0][1]))


def odd_leaker(ctx, args):
    """fleet-leaker copied to a name that is not UTF-8, started and ready."""
    odd = os.fsencode(ctx.path("leaker-")) + b"\xff\xfe"
    shutil.copy(fleetlib.LEAKER, odd)
    os.chmod(odd, 0o755)
    ready = ctx.path("ready-odd")
    proc = e2elib.start_preloaded(ctx, [odd, ready, "20", "0"])
    e2elib.wait_for(lambda: os.path.exists(ready), "the oddly named leaker")
    return proc


def check_odd(api, ctx, args, odd):
    snap = fleetlib.export_json(ctx, args, odd.pid, "odd.json")
    series = query(api, 'memtop_live_bytes{pid="%d"}' % odd.pid)
    check(len(series) == 1 and series[0][0].get("exe") == snap["exe"] and
          "\ufffd" in snap["exe"], "exe label of a non-UTF-8 path: %r, JSON %r" %
          (series, snap["exe"]))
    print("ok: a non-UTF-8 executable path is labelled as the JSON names it: %r" % snap["exe"])


def exact_flag(base, pid):
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    got = [v for (name, labels), v in fleetlib.metric_samples(body.decode()).items()
           if name == "memtop_data_exact" and ("pid", str(pid)) in labels]
    return got[0] if len(got) == 1 else None


def check_sampled(ctx, base, leaker):
    """A sampled process's figures are estimates: memtop_data_exact 0, as
    its JSON's health says (before: 1 for every process, whatever it was)."""
    ready = ctx.path("ready-sampled")
    proc = e2elib.start_preloaded(ctx, [fleetlib.LEAKER, ready, "20", "0"], MEMTOP_SAMPLE="64k")
    try:
        e2elib.wait_for(lambda: os.path.exists(ready), "the sampled leaker")
        flag = e2elib.wait_for(lambda: exact_flag(base, proc.pid) is not None and
                               [exact_flag(base, proc.pid)], "the sampled leaker in /metrics")[0]
        check(flag == 0, "memtop_data_exact of a sampled process: %r, want 0" % flag)
        check(exact_flag(base, leaker.pid) == 1, "memtop_data_exact of the exact leaker: %r" %
              exact_flag(base, leaker.pid))
    finally:
        e2elib.stop(proc)
    print("ok: memtop_data_exact 0 for a sampled process, 1 for an exact one")


def test(args):
    ctx = e2elib.Ctx(args)
    fleetlib.need("prometheus", "prometheus")
    leaker = fleetlib.start_leaker(ctx, args, ctx.path("ready"))
    odd = odd_leaker(ctx, args)
    serve = prom = None
    try:
        serve, base = fleetlib.start_serve(ctx, args)
        check_promtool(ctx, base)
        snap = fleetlib.export_json(ctx, args, leaker.pid, "x.json")
        prom, api = start_prometheus(ctx, base[len("http://"):])
        want = expected(snap, leaker.pid)
        wait_matching(api, want, "the JSON's totals for pid %d" % leaker.pid)
        print("ok: Prometheus holds the JSON's totals: %s" %
              ", ".join("%s=%d" % (k.split("{")[0], v) for k, v in want.items()))
        check_traces(api, snap, leaker.pid)
        up = query(api, 'up{job="memtop"}')
        check(up and up[0][1] == 1, "up{job=memtop}: %r" % up)
        check_odd(api, ctx, args, odd)
        check_sampled(ctx, base, leaker)
    finally:
        for p in (prom, serve, leaker, odd):
            if p:
                e2elib.stop(p)
    check(not os.path.exists(ctx.path("core")), "a core file was left")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
