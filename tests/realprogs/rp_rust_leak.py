#!/usr/bin/env python3
"""Real program: a Rust service (scripts/grow_map.rs, built here with
rustc -O -g) under libmemtop.so whose session map (HashMap of format!-ed
Strings, with a BTreeMap index) grows steadily next to format!/repeat
churn.  `memtop -p PID --batch -s leak` must rank a map-growth site first,
with a LOCATION in the program's own code (grow_map::open_session), and no
row of the top 5 may show Rust's allocation internals (alloc::, hashbrown,
core::fmt, <String as fmt::Write>::write_fmt, <str>::repeat, ...) (issue
14).  RUSTC picks the compiler (default: rustc on PATH); skipped (77)
without one.  Every wait is bounded; the program is ended by the test."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import SKIP, leak_report, script  # noqa: E402

HALF_SESSIONS = 31 * 1000   # grow_map.rs: sessions open when it writes `half`
INTERNALS = re.compile(r"^(<[&\w ]*)?(alloc::|core::|std::|hashbrown::|__rust|__rdl|<str>|<\[)")


def fail(msg):
    print("FAIL rp_rust_leak.py: " + msg)
    sys.exit(1)


def build(work):
    rustc = os.environ.get("RUSTC") or shutil.which("rustc")
    if not rustc:
        print("SKIP: rustc is not installed")
        sys.exit(SKIP)
    exe = os.path.join(work, "grow_map")
    cmd = [rustc, "-O", "-g", "--edition", "2021", "-o", exe, script("grow_map.rs")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        fail("%s: %s" % (" ".join(cmd), r.stderr))
    print(subprocess.run([rustc, "--version"], capture_output=True, text=True).stdout.strip())
    return exe


def wait_file(path, proc, seconds):
    for _ in range(int(seconds * 10)):
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            fail("grow_map exited with %s" % proc.returncode)
        time.sleep(0.1)
    fail("no %s after %d s" % (path, seconds))


def check(text, rows, traces):
    print(text)
    if not rows or not traces:
        fail("no rows in:\n" + text)
    top = rows[0]
    if not top["where"].startswith("grow_map::open_session "):
        fail("the first row's LOCATION is not the program's open_session: %r" % top["where"])
    if top["blocks"] < HALF_SESSIONS or not top["growth"].startswith("+"):
        fail("the first row is not a map-growth site (%d sessions open): %r"
             % (HALF_SESSIONS, top))
    for r in rows:
        if INTERNALS.match(r["where"]):
            fail("a row shows Rust's allocation internals: %r" % r["where"])
    print("ok: -s leak ranks %s first (%d blocks, %s)" % (top["where"], top["blocks"],
                                                        top["growth"]))


def main():
    lib, memtop = os.environ.get("MTP_LIB"), os.environ.get("MTP_MEMTOP")
    if not lib or not memtop:
        print("SKIP: MTP_LIB / MTP_MEMTOP not set")
        return SKIP
    work = os.path.join(os.environ.get("MTP_WORK", "/tmp"), "rust_leak")
    shutil.rmtree(work, ignore_errors=True)
    shm = os.path.join(work, "shm")
    os.makedirs(shm, mode=0o700)
    exe = build(work)
    env = dict(os.environ, LD_PRELOAD=lib, MEMTOP_SHM_DIR=shm)
    env.pop("MEMTOP_SKIP_FUNCS", None)
    proc = subprocess.Popen([exe, work], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_file(os.path.join(work, "half"), proc, 120)
        time.sleep(1)
        report = leak_report(memtop, proc.pid, shm, os.path.join(work, "leak.json"))
    finally:
        open(os.path.join(work, "stop"), "w").close()
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    check(*report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
