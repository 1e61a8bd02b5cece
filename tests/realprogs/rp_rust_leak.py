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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import SKIP, leak_run, leak_workdir, script  # noqa: E402

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
    work, shm = leak_workdir("rust_leak")
    check(*leak_run([build(work), work], work, shm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
