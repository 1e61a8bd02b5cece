#!/usr/bin/env python3
"""check_serve_container.py -- root's `memtop --serve` exports processes in containers too.

Why it exists: fleets run their services in containers.  fleet-leaker runs
as in a container (`unshare -m -p -f`: its own PID namespace and a private
tmpfs as its segment directory, which the host does not see) beside one on
the host.  The exporter (as root) must list both: the contained one under
its host pid with a non-empty container label (its cgroup, or
pid:[INODE]), the host one with an empty label; its live bytes must equal
`memtop -p HOSTPID --export`'s; /pprof/heap?pid=HOSTPID must decode to the
same live bytes.
"""

import os

import fleetlib
from fleetlib import check, e2elib


def series(base):
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    return {dict(k[1])["pid"]: (dict(k[1]), v)
            for k, v in fleetlib.metric_samples(body.decode()).items()
            if k[0] == "memtop_live_bytes"}


def test(args):
    e2elib.skip_unless_root("containers need root (unshare)")
    fleetlib.need("protoc", "protobuf-compiler")
    ctx = e2elib.Ctx(args)
    ready = ctx.path("ready-ns")
    ns, nspid = e2elib.start_in_namespaces(ctx, [fleetlib.LEAKER, ready, "50", "0"])
    host = serve = None
    try:
        e2elib.wait_for(lambda: os.path.exists(ready), "the contained leaker to be ready")
        host = fleetlib.start_leaker(ctx, args, ctx.path("ready-host"))
        serve, base = fleetlib.start_serve(ctx, args)
        got = e2elib.wait_for(lambda: (lambda s: s if str(nspid) in s and str(host.pid) in s
                                       else None)(series(base)),
                              "both leakers in /metrics", timeout=20, step=0.3)
        labels, live = got[str(nspid)]
        check(labels["container"], "the contained process has no container label: %r" % labels)
        check(got[str(host.pid)][0]["container"] == "",
              "the host process has a container label: %r" % got[str(host.pid)][0])
        snap = fleetlib.export_json(ctx, args, nspid, "ns.json")
        check(live == snap["totals"]["live_bytes"], "exported %d live bytes, JSON %d" %
              (live, snap["totals"]["live_bytes"]))
        status, _, body = fleetlib.http_get(base + "/pprof/heap?pid=%d" % nspid)
        check(status == 200, "/pprof/heap?pid=%d: %s" % (nspid, status))
        with open(ctx.path("ns.pb.gz"), "wb") as f:
            f.write(body)
        prof = fleetlib.decode_pprof(ctx.path("ns.pb.gz"))
        inuse = sum(s["values"][0] for s in prof.samples)
        check(inuse == live, "the profile holds %d live bytes, /metrics %d" % (inuse, live))
        print("ok: pid %d in a container (container=%r) and pid %d on the host, %d live bytes "
              "alike in /metrics, JSON and pprof" % (nspid, labels["container"], host.pid, live))
    finally:
        for p in (serve, host, ns):
            if p:
                e2elib.stop(p)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
