#!/usr/bin/env python3
"""check_serve_churn.py -- `memtop --serve` while processes come and go, under a scrape storm.

Why it exists: a fleet's processes start, exit and crash all the time, and
a scraper may hammer the endpoint; the exporter must neither fall over nor
report the dead.  For several seconds fleet-leaker processes keep starting
and exiting (some killed with SIGKILL, leaving stale segments) while 24
client threads scrape /metrics (text and OpenMetrics), /, and /pprof/heap of
recent pids, and bursts of 150 connections open at once.  Every answer is
well-formed (200 with a parseable body; 404 only for a pid that is gone;
refused or reset connections only beyond the connection limit), promtool
accepts sampled bodies, the exporter is still alive and answering, no
series remain for processes that are gone, and SIGTERM stops it (exit 0).
"""

import gzip
import random
import signal
import socket
import subprocess
import threading
import time

import fleetlib
from fleetlib import check, e2elib

RUN_S = 8
CLIENTS = 24
BURST = 150


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = {"/metrics": 0, "/": 0, "/pprof/heap": 0}
        self.gone = 0
        self.refused = 0
        self.bad = []
        self.bodies = []
        self.pids = []


def classify(stats, route, status, ctype, body, pid):
    if status == 404 and route == "/pprof/heap":
        with stats.lock:
            stats.gone += 1
        return
    if status != 200:
        return "%s: status %s" % (route, status)
    try:
        if route == "/metrics":
            if ctype.startswith("application/openmetrics-text"):
                if not body.endswith(b"# EOF\n"):
                    return "OpenMetrics body without # EOF"
                body = body[:-len(b"# EOF\n")]
            fleetlib.metric_samples(body.decode("utf-8"))
        elif route == "/pprof/heap":
            gzip.decompress(body)
    except Exception as e:  # noqa: BLE001 -- any parse error is the failure
        return "%s (pid %s): unparseable answer: %s" % (route, pid, e)
    with stats.lock:
        stats.ok[route] += 1
        if route == "/metrics" and not ctype.startswith("application/openmetrics") and \
                len(stats.bodies) < 8 and random.random() < 0.2:
            stats.bodies.append(body)


def client(base, stats, stop):
    while not stop.is_set():
        route = random.choice(["/metrics", "/metrics", "/", "/pprof/heap"])
        pid, url, headers = None, base + route, {}
        if route == "/pprof/heap":
            with stats.lock:
                pid = random.choice(stats.pids) if stats.pids else 1
            url += "?pid=%d" % pid
        elif route == "/metrics" and random.random() < 0.5:
            headers["Accept"] = "application/openmetrics-text;version=1.0.0"
        try:
            status, ctype, body = fleetlib.http_get(url, headers, timeout=20)
        except OSError:
            with stats.lock:
                stats.refused += 1
            continue
        why = classify(stats, route, status, ctype, body, pid)
        if why:
            with stats.lock:
                stats.bad.append(why)


def burst(port):
    """BURST connections at once, each sending a request; answers not awaited."""
    socks = []
    for _ in range(BURST):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        except OSError:
            pass
    time.sleep(0.2)
    for s in socks:
        s.close()


def spawner(ctx, args, stats, procs, stop):
    n = 0
    while not stop.is_set():
        p = fleetlib.start_leaker(ctx, args, None, blocks=20, hold=0.2)
        procs.append(p)
        with stats.lock:
            stats.pids.append(p.pid)
        n += 1
        if n % 4 == 0:
            time.sleep(0.3)
            p.send_signal(signal.SIGKILL)  # a crash: its segment goes stale
        time.sleep(0.15)
        for q in procs:
            q.poll()


def check_promtool(stats):
    promtool = fleetlib.need("promtool", "prometheus")
    check(stats.bodies, "no /metrics body was sampled")
    for body in stats.bodies:
        proc = subprocess.run([promtool, "check", "metrics"], input=body, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        check(proc.returncode == 0, "promtool check metrics failed:\n%s" % proc.stdout.decode())
    print("ok: promtool accepts %d bodies sampled during the churn" % len(stats.bodies))


def test(args):
    fleetlib.need("promtool", "prometheus")
    ctx = e2elib.Ctx(args)
    serve, base = fleetlib.start_serve(ctx, args)
    port = int(base.rsplit(":", 1)[1])
    stats, stop, procs = Stats(), threading.Event(), []
    threads = [threading.Thread(target=client, args=(base, stats, stop)) for _ in range(CLIENTS)]
    threads.append(threading.Thread(target=spawner, args=(ctx, args, stats, procs, stop)))
    try:
        for t in threads:
            t.start()
        for _ in range(RUN_S):
            time.sleep(1)
            burst(port)
        stop.set()
        for t in threads:
            t.join(60)
        for p in procs:
            fleetlib.wait_exit(p)
            e2elib.stop(p)
        check(serve.poll() is None, "memtop --serve died (exit %s): %s" %
              (serve.returncode, serve.stderr.read() if serve.returncode is not None else ""))
        check(not stats.bad, "%d bad answers, e.g. %s" % (len(stats.bad), stats.bad[:5]))
        check(all(stats.ok.values()), "some route never answered 200: %r" % stats.ok)
        print("ok: %d processes came and went; answers %r, %d 404 for gone pids, %d connections "
              "refused or reset" % (len(procs), stats.ok, stats.gone, stats.refused))
        check_promtool(stats)
        time.sleep(1)  # past the exporter's refresh interval
        status, _, body = fleetlib.http_get(base + "/metrics")
        check(status == 200, "/metrics after the churn: %s" % status)
        left = [k for k in fleetlib.metric_samples(body.decode()) if k[0] == "memtop_live_bytes"]
        check(not left, "series left for processes that are gone: %r" % left[:5])
        status, _, _ = fleetlib.http_get(base + "/pprof/heap?pid=%d" % procs[0].pid)
        check(status == 404, "/pprof/heap of a gone pid: %s" % status)
        print("ok: no series left for the %d processes that are gone" % len(procs))
    finally:
        stop.set()
        for p in procs:
            e2elib.stop(p)
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=20)
    check(serve.returncode == 0, "memtop --serve exited %s on SIGTERM" % serve.returncode)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
