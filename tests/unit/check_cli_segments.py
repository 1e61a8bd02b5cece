#!/usr/bin/env python3
"""check_cli_segments.py -- memtop's command line on synthetic segments.

Why it exists: the viewer's error paths and exports must work whatever the
target wrote, and these cases are hard to produce with a real target: a
segment of an exited process, a stale one (process gone), a foreign
version, a truncated file, a snapshot naming an undefined trace, and a
running target that never answers the control channel.  make_segment
writes each one into a private MEMTOP_SHM_DIR; memtop must export the good
ones (a stale one's last snapshot, said to be so) and refuse the bad ones
with one line on stderr and exit status 1.
"""

import csv
import json
import os
import shutil
import subprocess
import sys


def run(memtop, env, *args):
    return subprocess.run([memtop, *args], env=env, stdin=subprocess.DEVNULL, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def check(cond, what, proc=None):
    if not cond:
        detail = "" if proc is None else "\nexit %d\nstdout:\n%s\nstderr:\n%s" % (
            proc.returncode, proc.stdout, proc.stderr)
        print("FAIL: " + what + detail)
        sys.exit(1)


def dead_pid():
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def expect_error(memtop, env, pid, needle):
    proc = run(memtop, env, "-p", str(pid), "--export", os.path.join(env["WORK"], "x.json"))
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode == 1 and len(lines) == 1 and needle in lines[0],
          "expected exit 1 and one line with %r" % needle, proc)
    check(proc.stdout == "", "expected nothing on stdout", proc)


def check_exports(memtop, env, pid):
    out = os.path.join(env["WORK"], "exited.json")
    proc = run(memtop, env, "-p", str(pid), "--export", out)
    check(proc.returncode == 0, "export of an exited segment", proc)
    with open(out) as f:
        snap = json.load(f)
    check(snap["exited"] is True and snap["state"] == "exited", "exited flag in JSON")
    check(snap["pid"] == pid and len(snap["traces"]) == 8, "pid and every trace in JSON")
    check(snap["cmdline"] == 'test-prog --flag "quoted"', "cmdline escaped and read back")
    check(snap["traces"][0]["live_bytes"] == 1600, "largest trace first")
    check(snap["traces"][0]["frames"][0]["module"] == "/lib/mod1.so", "frame module")
    check(snap["totals"]["allocator_bytes"] is None, "unknown allocator bytes are null")
    out = os.path.join(env["WORK"], "exited.csv")
    check(run(memtop, env, "-p", str(pid), "--export", out).returncode == 0, "csv export")
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    check(len(rows) == 9 and all(len(r) == len(rows[0]) for r in rows), "csv shape")
    proc = run(memtop, env, "-p", str(pid), "--batch")
    check(proc.returncode == 0 and "exited" in proc.stdout and "mod" in proc.stdout,
          "batch report of an exited process", proc)


def check_stale(memtop, env, pid):
    """A process gone without its final snapshot (SIGKILL, an OOM kill): its
    segment is kept for its last snapshot, which -p shows and exports as
    stale (said once on stderr); recording it is refused."""
    out = os.path.join(env["WORK"], "stale.json")
    proc = run(memtop, env, "-p", str(pid), "--export", out)
    lines = proc.stderr.strip().splitlines()
    check(proc.returncode == 0 and os.path.exists(out) and
          any("ended without publishing its final state" in ln for ln in lines),
          "export of a stale segment: its last snapshot, said so", proc)
    if os.path.exists(out):
        with open(out) as f:
            snap = json.load(f)
        check(snap["state"] == "stale" and snap["pid"] == pid, "state stale in JSON")
    proc = run(memtop, env, "-p", str(pid), "--batch")
    check(proc.returncode == 0 and " stale" in proc.stdout, "batch report of a stale segment",
          proc)
    proc = run(memtop, env, "-p", str(pid), "--record", os.path.join(env["WORK"], "s.dat"))
    check(proc.returncode == 1 and "stale" in proc.stderr, "recording a stale segment: refused",
          proc)


def check_unanswered(memtop, env, mk):
    """A 'running' target (this script) that never answers PUBLISH_NOW."""
    me = os.getpid()
    subprocess.run([mk, env["MEMTOP_SHM_DIR"], str(me), "running"], check=True)
    out = os.path.join(env["WORK"], "running.json")
    proc = run(memtop, env, "-p", str(me), "--export", out)
    check(proc.returncode == 0 and "did not answer" in proc.stderr,
          "export falls back to the latest snapshot when the target does not answer", proc)
    with open(out) as f:
        check(json.load(f)["state"] == "running", "state running")
    os.unlink(os.path.join(env["MEMTOP_SHM_DIR"], "memtop-%d" % me))


def main():
    memtop, mk, work = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    shm = os.path.join(work, "shm")
    os.makedirs(shm)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTOP_")}
    env.update(MEMTOP_SHM_DIR=shm, WORK=work, LC_ALL="C")
    pids = {}
    for mode in ("exited", "stale", "foreign", "truncated", "garbled"):
        pids[mode] = dead_pid()
        subprocess.run([mk, shm, str(pids[mode]), mode], check=True)
    check_exports(memtop, env, pids["exited"])
    check_stale(memtop, env, pids["stale"])
    expect_error(memtop, env, pids["foreign"], "foreign version 7 (this memtop reads versions 1 and 2)")
    expect_error(memtop, env, pids["truncated"], "truncated")
    expect_error(memtop, env, pids["garbled"], "corrupt")
    check_unanswered(memtop, env, mk)
    proc = run(memtop, env, "--list")
    check(proc.returncode == 0 and len(proc.stdout.splitlines()) == 6, "--list: 5 rows", proc)
    proc = run(memtop, env, "--clean")
    gone = sorted(n for n in os.listdir(shm))
    check(proc.returncode == 0 and "memtop-%d" % pids["stale"] not in gone and
          "memtop-%d" % pids["exited"] in gone, "--clean removes only what is stale", proc)
    print("PASS check_cli_segments.py")


if __name__ == "__main__":
    main()
