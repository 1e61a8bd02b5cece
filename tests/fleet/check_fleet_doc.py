#!/usr/bin/env python3
"""check_fleet_doc.py -- docs/fleet.md's configurations work and the systemd unit is valid.

Why it exists: an operator pastes these blocks into production.  The
Prometheus configuration and alert rules of docs/fleet.md must pass
`promtool check config` and `promtool check rules`; the Grafana dashboard
must be JSON whose every PromQL expression names only memtop_* series that a
running `memtop --serve` really exports (and every metric the doc's table
lists must be served, and every state of memtop_exporter_processes
explained in its table of states); the configured memtop-exporter.service must pass
`systemd-analyze verify` without a warning, running `memtop --serve` on
127.0.0.1.
"""

import json
import os
import re
import shutil
import subprocess

import fleetlib
from fleetlib import check, e2elib


def blocks(doc):
    """{name: text} of the code blocks after <!-- fleet-doc: name -->."""
    found = dict(re.findall(r"<!-- fleet-doc: ([\w-]+) -->\n```\w*\n(.*?)```", doc, re.S))
    for name in ("prometheus-config", "prometheus-rules", "grafana-dashboard"):
        check(name in found, "docs/fleet.md has no %s block" % name)
    return found


def promtool_checks(ctx, found):
    promtool = fleetlib.need("promtool", "prometheus")
    with open(ctx.path("prometheus.yml"), "w") as f:
        f.write(found["prometheus-config"])
    with open(ctx.path("memtop-rules.yml"), "w") as f:
        f.write(found["prometheus-rules"])
    for what, path in (("config", "prometheus.yml"), ("rules", "memtop-rules.yml")):
        proc = e2elib.run([promtool, "check", what, ctx.path(path)], ctx.env)
        check(proc.returncode == 0, "promtool check %s failed:\n%s" % (what, e2elib.describe(proc)))
    print("ok: promtool accepts the scrape config and the alert rules")


def served_names(ctx, args):
    """The samples a running exporter serves, with a leaking target."""
    leaker = fleetlib.start_leaker(ctx, args, ctx.path("ready"))
    serve = None
    try:
        serve, base = fleetlib.start_serve(ctx, args)
        status, _, body = fleetlib.http_get(base + "/metrics")
        check(status == 200, "/metrics: %s" % status)
        return fleetlib.metric_samples(body.decode())
    finally:
        for p in (serve, leaker):
            if p:
                e2elib.stop(p)


def check_states(doc, samples):
    """The table of states lists exactly the states served."""
    served = {dict(k[1])["state"] for k in samples if k[0] == "memtop_exporter_processes"}
    m = re.search(r"\| state \| what it counts \|\n\|---\|---\|\n((?:\|.*\n)+)", doc)
    check(m, "docs/fleet.md has no table of memtop_exporter_processes states")
    listed = set(re.findall(r"^\| `(\w+)` \|", m.group(1), re.M))
    check(listed == served, "states served %s, explained %s" % (sorted(served), sorted(listed)))
    print("ok: the %d states of memtop_exporter_processes are explained" % len(served))


def check_names(doc, found, names):
    dash = json.loads(found["grafana-dashboard"])
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [found["prometheus-rules"]]
    used = set()
    for e in exprs:
        used |= set(re.findall(r"\b(memtop_[a-z_]+)\b", e))
    missing = sorted(used - names)
    check(not missing, "the doc's queries use series the exporter does not serve: %s" % missing)
    table = set(re.findall(r"`(memtop_[a-z_]+)(?:\{\w+\})?`", doc))
    unserved = sorted(table - names)
    check(not unserved, "docs/fleet.md lists metrics that are not served: %s" % unserved)
    undocumented = sorted(names - table)
    check(not undocumented, "served metrics missing from docs/fleet.md: %s" % undocumented)
    print("ok: the dashboard (%d queries) and rules use only served series; the table lists "
          "all %d" % (len(exprs), len(names)))


def check_unit(ctx, args):
    analyze = fleetlib.need("systemd-analyze", "systemd")
    with open(fleetlib.UNIT) as f:
        unit = f.read()
    m = re.search(r"^ExecStart=(\S+) --serve 127\.0\.0\.1:\d+$", unit, re.M)
    check(m and os.path.isabs(m.group(1)), "ExecStart is not `/abs/memtop --serve 127.0.0.1:PORT`")
    path = ctx.path("memtop-exporter.service")
    with open(path, "w") as f:  # the installed memtop need not exist yet: the built one
        f.write(unit.replace(m.group(1), os.path.abspath(args.memtop)))
    proc = e2elib.run([analyze, "verify", "--man=no", path], ctx.env)
    check(proc.returncode == 0 and not proc.stderr.strip(),
          "systemd-analyze verify:\n%s" % e2elib.describe(proc))
    print("ok: systemd-analyze verify accepts memtop-exporter.service")


def test(args):
    ctx = e2elib.Ctx(args)
    with open(os.path.join(args.source_dir, "docs", "fleet.md")) as f:
        doc = f.read()
    found = blocks(doc)
    promtool_checks(ctx, found)
    samples = served_names(ctx, args)
    check_names(doc, found, {k[0] for k in samples})
    check_states(doc, samples)
    check_unit(ctx, args)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
