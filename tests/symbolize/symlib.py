"""symlib.py -- shared helpers of the symbolization tests (python3, stdlib).

Why it exists: each check_*.py builds a program, runs it under
`memtop --export`, and reads the frames back; the arguments CMake passes,
the private work directory (own MEMTOP_SHM_DIR), running commands and
grouping JSON frames into per-address inline chains are the same for all.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402

SKIP = 77


def fail(msg):
    print("FAIL %s: %s" % (os.path.basename(sys.argv[0]), msg), flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def skip(msg):
    print("SKIP %s: %s" % (os.path.basename(sys.argv[0]), msg), flush=True)
    sys.exit(SKIP)


def passed():
    print("PASS %s" % os.path.basename(sys.argv[0]), flush=True)
    sys.exit(0)


def setup(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--memtop", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--cc", default="cc")
    p.add_argument("--workdir", required=True)
    p.add_argument("--preload", help="libmemtop.so (tests that attach with -p)")
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(os.path.join(a.workdir, "shm"))
    a.env = dict(os.environ, MEMTOP_SHM_DIR=os.path.join(a.workdir, "shm"))
    a.env.pop("MEMTOP_SKIP_FUNCS", None)
    a.env.pop("DEBUGINFOD_URLS", None)  # no network in tests
    return a


def run(cmd, env=None, timeout=120, ok=(0,)):
    print("+ " + " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("timed out: %s" % " ".join(cmd))
    if ok is not None and p.returncode not in ok:
        fail("%s exited %d\nstdout: %s\nstderr: %s" % (" ".join(cmd), p.returncode,
                                                      p.stdout[-3000:], p.stderr[-3000:]))
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def export(a, name, prog_argv, extra=()):
    """Runs prog under memtop --export; returns the parsed JSON."""
    out = os.path.join(a.workdir, name + ".json")
    run([a.memtop] + list(extra) + ["--export", out, "--"] + prog_argv, env=a.env)
    return load(out)


def start_live(a, argv, env=None, wrap=()):
    """Starts argv with libmemtop.so preloaded (under wrap, e.g. unshare)."""
    env = dict(env or a.env, LD_PRELOAD=a.preload)
    print("+ " + " ".join(list(wrap) + list(argv)), flush=True)
    return subprocess.Popen(list(wrap) + list(argv), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            universal_newlines=True)


stop = e2elib.stop  # ends a background process this test started


def same_module(shown, path):
    """A module named path, or path deleted since it was loaded."""
    return shown in (path, path + " (deleted)")


def export_live(a, name, pid, module, env=None, timeout=60, extra=()):
    """`memtop -p pid --export` until the snapshot holds frames of module
    (the target publishes after MEMTOP_START_MS); returns (JSON, seconds of
    the last memtop run)."""
    out = os.path.join(a.workdir, name + ".json")
    deadline = time.monotonic() + timeout
    while True:
        t0 = time.monotonic()
        p = run([a.memtop, "-p", str(pid)] + list(extra) + ["--export", out], env=env or a.env,
                ok=None)
        took = time.monotonic() - t0
        if p.returncode == 0:
            with open(out) as f:
                snap = json.load(f)
            if any(same_module(fr["module"], module) for t in snap["traces"]
                   for fr in t["frames"]):
                return snap, took
        if time.monotonic() > deadline:
            fail("no frame of %s in memtop -p %d --export:\n%s%s" %
                 (module, pid, p.stdout[-2000:], p.stderr[-2000:]))
        time.sleep(0.2)


def chains(trace):
    """[(address, module, offset, [frame objects, innermost first])] per machine frame."""
    out = []
    for fr in trace["frames"]:
        if out and out[-1][0] == fr["address"] and out[-1][3][-1]["inlined"]:
            out[-1][3].append(fr)
        else:
            out.append((fr["address"], fr["module"], fr["offset"], [fr]))
    return out


MANGLED = re.compile(r"(^|[^A-Za-z0-9_])(_ZN|_R[A-Z])|::h[0-9a-f]{16}($|[^0-9a-f])")


def mangled(name):
    return bool(name) and bool(MANGLED.search(name))


def is_hex(v):
    return isinstance(v, str) and re.match(r"^0x[0-9a-f]+$", v) is not None
