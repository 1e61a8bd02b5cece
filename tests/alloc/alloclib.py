"""alloclib.py -- the options every tests/alloc script accepts.

Why it exists: CMake passes the same list of test programs (alloc_args in
tests/alloc/CMakeLists.txt) to every script here; each script uses some.
One parser that knows them all, so that a program added to that list
cannot break the scripts that do not use it."""

import argparse
import os
import re
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402

PROGRAMS = ("--bump", "--nopie", "--dlopen", "--own-lib", "--je-static", "--je-shared",
            "--je-fork", "--je-cpp", "--je-cpp-shared", "--je-late", "--je-late-lib",
            "--jemalloc-pic", "--mimalloc", "--mi-dlsym", "--mi-late", "--mi-heap", "--mi-local",
            "--mi-local-lib", "--mi-ctor-lib", "--mi-copy", "--mi-copy-late", "--mi-copy-lib", "--tcmalloc",
            "--tcmalloc-shared")


def parse(description):
    """(the test programs, the e2e options): attributes are None where the
    build has no such program (its Debian package is missing)."""
    p = argparse.ArgumentParser(description=description)
    for opt in PROGRAMS:
        p.add_argument(opt)
    mine, rest = p.parse_known_args()
    return mine, e2elib.parse_args(description, rest)


def check_nothing_missed(health, where):
    """The health counters that say memtop missed a block are all 0."""
    for key in ("unknown_free_count", "untracked_alloc_count", "missed_free_count"):
        e2elib.check(health.get(key) == 0, "health.%s is %r\n%s" % (key, health.get(key), where))


def export_strict(ctx, name, prog):
    """Runs memtop --export NAME.json --strict -- prog: (the process, the
    snapshot, a description of the run for failure messages)."""
    out = ctx.path(name + ".json")
    cmd = [ctx.args.memtop, "--export", out, "--strict", "--"] + prog
    proc = e2elib.run(cmd, ctx.env)
    where = "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc))
    return proc, e2elib.load_json(out), where


def fork_child(ctx, prog, line_re, env):
    """The export (with -p, --strict) of a fork child of prog, run under
    memtop's preload with env: the first line of prog's output must match
    line_re, whose group 1 is the child's pid; the child waits there until
    it is killed (SIGTERM, after the export)."""
    proc = subprocess.Popen(prog, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(line_re, line.strip())
        e2elib.check(m, "fork child said %r" % line)
        out = ctx.path("fork.json")
        cmd = [ctx.args.memtop, "-p", m.group(1), "--export", out, "--strict"]
        res = e2elib.run(cmd, ctx.env)
        e2elib.check(res.returncode == 0, "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(res)))
        snap = e2elib.load_json(out)
        e2elib.check(snap["fork_child"] is True, "the -p export is not the fork child's")
        os.kill(int(m.group(1)), signal.SIGTERM)
        proc.wait(timeout=60)
        return snap
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run(test):
    """Runs test(); prints PASS or FAIL with the reason and exits 0 or 1."""
    name = os.path.basename(sys.argv[0])
    try:
        test()
    except e2elib.TestFailure as e:
        print("FAIL %s: %s" % (name, e), flush=True)
        sys.exit(1)
    print("PASS %s" % name, flush=True)
