#!/usr/bin/env python3
"""fleet_bench.py -- what pprof exports and `memtop --serve` scrapes cost (issue 16).

Usage: bench/fleet_bench.py BUILD_DIR [--traces 10000,100000] [--procs 50,200]

1. pprof vs JSON export of a recording of memtop-many-stacks with N distinct
   traces (`memtop -f X.dat --export X.pb.gz|X.json`): seconds, peak RSS
   (GNU time) and file size, interleaved in one run.
2. /metrics with K fleet-leaker processes: the first scrape after the
   500 ms refresh interval (re-list, re-read every snapshot, render) and the
   scrapes served from that refresh's body; and one /pprof/heap.
Everything runs in a private MEMTOP_SHM_DIR under $TMPDIR.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time
import urllib.request


def export_bench(build, work, env, n):
    bin_ = os.path.join(build, "bin")
    dat = os.path.join(work, "m%d.dat" % n)
    subprocess.run([bin_ + "/memtop", "--record", dat, "--export", os.devnull, "--",
                    bin_ + "/memtop-many-stacks", os.path.join(work, "g.json"), str(n), str(n)],
                   env=env, check=True, stderr=subprocess.DEVNULL)
    for ext in ("pb.gz", "json"):
        out = os.path.join(work, "m%d.%s" % (n, ext))
        t = subprocess.run(["/usr/bin/time", "-f", "%e %M", bin_ + "/memtop", "-f", dat,
                            "--export", out], env=env, check=True, stderr=subprocess.PIPE,
                           text=True).stderr.strip().splitlines()[-1].split()
        print("N=%-7d %-6s %6.2f s  %7d KB RSS  %10d bytes" %
              (n, ext, float(t[0]), int(t[1]), os.path.getsize(out)))
        os.unlink(out)


def scrape_bench(build, work, env, k):
    lib = os.path.join(build, "lib", "libmemtop.so")
    leakers = [subprocess.Popen([os.path.join(build, "bin", "fleet-leaker"), "-", "50", "0"],
                                env=dict(env, LD_PRELOAD=lib), stderr=subprocess.DEVNULL)
               for _ in range(k)]
    time.sleep(3)
    with socket_port() as port:
        pass
    serve = subprocess.Popen([os.path.join(build, "bin", "memtop"), "--serve",
                              "127.0.0.1:%d" % port], env=env, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        url = "http://127.0.0.1:%d" % port

        def get(path):
            t = time.perf_counter()
            body = urllib.request.urlopen(url + path).read()
            return time.perf_counter() - t, len(body)
        get("/metrics")
        fresh, cached = [], []
        for _ in range(10):
            time.sleep(0.6)
            d, size = get("/metrics")
            fresh.append(d)
            cached += [get("/metrics")[0] for _ in range(5)]
        time.sleep(0.6)
        d, psize = get("/pprof/heap?pid=%d" % leakers[0].pid)
        print("K=%-4d /metrics %7d bytes: after the refresh interval median %.1f ms (max %.1f), "
              "from the cached body median %.2f ms; /pprof/heap %d bytes %.1f ms" %
              (k, size, 1e3 * statistics.median(fresh), 1e3 * max(fresh),
               1e3 * statistics.median(cached), psize, 1e3 * d))
    finally:
        serve.terminate()
        serve.wait()
        for p in leakers:
            p.terminate()
        for p in leakers:
            p.wait()


class socket_port:
    """A free port of 127.0.0.1 (with-statement: its number)."""

    def __enter__(self):
        import socket
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        return self.s.getsockname()[1]

    def __exit__(self, *a):
        self.s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--traces", default="10000,100000")
    ap.add_argument("--procs", default="50,200")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    with tempfile.TemporaryDirectory(prefix="memtop-fleet-bench-") as work:
        shm = os.path.join(work, "shm")
        os.mkdir(shm, 0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTOP_")}
        env["MEMTOP_SHM_DIR"] = shm
        for n in (int(x) for x in a.traces.split(",") if x):
            export_bench(build, work, env, n)
        for k in (int(x) for x in a.procs.split(",") if x):
            scrape_bench(build, work, env, k)


if __name__ == "__main__":
    main()
