#!/usr/bin/env python3
"""test_reader_pipe.py -- the first pass read on a second thread
(src/ipc/dat_pipe.c) gives what the one-thread pass gives, to the byte.

A 2-thread memtop-alloc-bench recording of several frames is read by
`memtop -f` with MEMTOP_READ_THREADS=1 and =2 (--batch, --batch --at,
--export to .json and .csv), whole, cut in the middle of a frame, and with
bytes overwritten inside a middle frame (zstd then fails there: an error
after part of the events); exit code, stdout, stderr and the exported file
must be the same.  MEMTOP_READ_STATS=1 shows that =2 did use the thread.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, env):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


def count_frames(dump, path):
    """The complete zstd frames, as dat_dump counts them."""
    out = run([dump, path], dict(os.environ)).stdout.decode()
    m = re.search(r"^frames (\d+)$", out, re.M)
    return int(m.group(1)) if m else 0


def read_all(a, path, extra, threads):
    env = dict(os.environ)
    env.pop("MEMTOP_RECORD", None)
    env.pop("MEMTOP_READ_STATS", None)
    env["MEMTOP_READ_THREADS"] = str(threads)
    out = None
    cmd = [a.memtop, "-f", path, "--no-symbols"]
    if extra and extra[0] == "--export":
        out = os.path.join(a.workdir, "x." + extra[1])
        if os.path.exists(out):
            os.unlink(out)
        cmd += ["--export", out]
    else:
        cmd += extra
    p = run(cmd, env)
    data = open(out, "rb").read() if out and os.path.exists(out) else None
    return (p.returncode, p.stdout, p.stderr, data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memtop", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)

    whole = os.path.join(a.workdir, "whole.dat")
    env = dict(os.environ)
    env.update(MEMTOP_RECORD=whole, LD_PRELOAD=a.preload, MEMTOP_SHM_DIR=a.workdir)
    p = run([a.bench, "-t", "2", "-n", "400000"], env)
    if not check(p.returncode == 0 and os.path.exists(whole), "the bench recorded"):
        return 1
    nframes = count_frames(a.dump, whole)
    check(nframes >= 4, "the recording has several frames (%d)" % nframes)

    data = open(whole, "rb").read()
    cut = os.path.join(a.workdir, "cut.dat")
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 3 // 5])
    bad = os.path.join(a.workdir, "bad.dat")
    at = len(data) * 2 // 5
    with open(bad, "wb") as f:
        f.write(data[:at] + b"\x55" * 64 + data[at + 64:])

    env = dict(os.environ, MEMTOP_READ_THREADS="2", MEMTOP_READ_STATS="1")
    p = run([a.memtop, "-f", whole, "--batch", "--no-symbols"], env)
    check(b"read pass: 2 threads" in p.stderr, "MEMTOP_READ_THREADS=2 reads on a second thread")
    env["MEMTOP_READ_THREADS"] = "1"
    p = run([a.memtop, "-f", whole, "--batch", "--no-symbols"], env)
    check(b"read pass: 1 thread" in p.stderr, "MEMTOP_READ_THREADS=1 reads on one")

    cmds = [["--batch"], ["--batch", "--at", "0.3"], ["--export", "json"],
            ["--export", "csv"]]
    for path in (whole, cut, bad):
        for extra in cmds:
            one = read_all(a, path, extra, 1)
            two = read_all(a, path, extra, 2)
            what = "%s %s" % (os.path.basename(path), " ".join(extra))
            check(one == two, what + ": the same with 1 and 2 threads (exit %d)" % one[0])
            if path == whole:
                check(one[0] == 0, what + ": reads cleanly")
            if path == bad and extra == ["--batch"]:
                check(one[0] != 0 and one[2].count(b"\n") == 1,
                      what + ": an error, one line: " + one[2].decode(errors="replace").strip())
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
