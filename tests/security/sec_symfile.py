#!/usr/bin/env python3
"""sec_symfile.py -- a target's user truncates its module files while root symbolizes them.

The attack: a local user runs a preloaded program built into their own
directory (a copy of memtop-demo whose DWARF sits in a .gnu_debuglink file
next to it, memtop-demo.debug).  Root watches it with `memtop -p PID --batch`
and `--export`, fresh processes, so each opens and symbolizes the files anew.
Meanwhile the user cuts both files with ftruncate and writes them back, in a
loop (the executable's path first gets a new inode with the same content:
a running executable itself cannot be opened for writing).  libelf maps the
files it reads, so before src/symbolize/safe_file.c a page cut off under
libdw killed root's memtop with SIGBUS.  Now another user's file is read
from a sealed memfd copy.

Passes if no memtop run ended by a signal or hung, and, with the files
intact (before and after the attack), the program's frames are named from
the debug file: function, file and line.  Last, the user puts a FIFO where
the debug file was: root's export must not block opening it (it did).
"""

import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, fail  # noqa: E402

# Without the fix, about 1 run in 2 died of SIGBUS here (61 of 120).
RUNS = 120

# The attacker, run as the throwaway user: cut each file at a few places,
# write the rest back, forever.
CUTTER = r"""
import os, sys
files = [(p, open(p + ".orig", "rb").read()) for p in sys.argv[1:]]
i = 0
while True:
    for path, data in files:
        fd = os.open(path, os.O_WRONLY)
        cut = [0, 4096, len(data) // 3, len(data) // 2][i % 4] & ~4095
        os.ftruncate(fd, cut)
        os.pwrite(fd, data[cut:], cut)
        os.close(fd)
    i += 1
"""


def demo_frames(path):
    """The frames of the program's own module in an export, as dicts."""
    snap = seclib.e2elib.load_json(path)
    return [f for tr in snap["traces"] for f in tr["frames"]
            if f.get("module", "").endswith("/memtop-demo")]


def names_resolve(memtop, env, pid, out):
    """Root exports the target; its own frames must carry names from DWARF."""
    p = seclib.run_as(None, [memtop, "-p", pid, "--export", out], env)
    check(p.returncode == 0, "root's export failed: %s" % seclib.e2elib.describe(p))
    frames = demo_frames(out)
    named = [f for f in frames if f["function"] and f["file"] and f["file"].endswith("demo.c")]
    check(any(f["function"] == "session_log_append" for f in named),
          "the program's frames should be named from its debug file: %s" % frames)


def build_target(home, demo, user):
    """memtop-demo copied into the user's home, its DWARF in a debuglink file."""
    exe = os.path.join(home, "memtop-demo")
    dbg = exe + ".debug"
    shutil.copy(demo, exe)
    for cmd in (["objcopy", "--only-keep-debug", exe, dbg], ["strip", "--strip-debug", exe],
                ["objcopy", "--add-gnu-debuglink=" + dbg, exe]):
        subprocess.run(cmd, check=True, cwd=home)
    for path in (exe, dbg):
        shutil.copy(path, path + ".orig")
    for name in os.listdir(home):
        os.chown(os.path.join(home, name), user.uid, user.gid)
    return exe, dbg


def verdict(i, proc, failures, reasons):
    if proc.returncode < 0 or proc.returncode > 1:
        failures.append("run %d: %s" % (i, seclib.e2elib.describe(proc)))
    for word in ("file changed", "bad ELF file", "binary replaced", "no symbols",
                 "file deleted", "file too large"):
        if word in proc.stdout:
            reasons[word] = reasons.get(word, 0) + 1


def test(args):
    ctx = seclib.Ctx(args)
    shm = seclib.shared_dir(ctx, "shm")
    env = ctx.env_with(MEMTOP_SHM_DIR=shm)
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
    with seclib.throwaway_users(ctx, 1) as (user,):
        exe, dbg = build_target(user.home, args.demo, user)
        target = seclib.start_as(user, [exe, "600"], ctx.env_with(MEMTOP_SHM_DIR=shm,
                                                                  LD_PRELOAD=args.preload))
        cutter = None
        try:
            seg = os.path.join(shm, "memtop-%d" % target.pid)
            seclib.e2elib.wait_for(lambda: os.path.exists(seg) and target.poll() is None,
                                   "the target's segment %s" % seg)
            pid = str(target.pid)
            time.sleep(0.5)  # a few ticks: every allocation site has been seen
            names_resolve(args.memtop, env, pid, ctx.path("before.json"))

            # A new inode at the executable's path (same bytes), so it can be written.
            p = seclib.run_as(user, ["sh", "-c", 'cp "$0.orig" "$0.new" && mv "$0.new" "$0"', exe],
                              env)
            check(p.returncode == 0, "replacing the executable: %s" % p.stderr)
            cutter = seclib.start_as(user, [python, "-c", CUTTER, exe, dbg], env)
            failures, reasons = [], {}
            for i in range(RUNS):
                if i % 2:
                    opts = ["--export", ctx.path("run.json")]
                else:
                    opts = ["--batch", "-n", "1", "--top", "10"]
                proc = seclib.run_as(None, [args.memtop, "-p", pid] + opts, env, timeout=60)
                if i % 2 and proc.returncode == 0:
                    proc.stdout = open(ctx.path("run.json")).read()
                verdict(i, proc, failures, reasons)
                if cutter.poll() is not None:
                    fail("the attacker's cutter stopped: %s" % cutter.stderr.read())
            seclib.e2elib.stop(cutter)
            cutter = None
            print("%d runs under attack; unresolved reasons seen (runs): %s" %
                  (RUNS, sorted(reasons.items())))
            if failures:
                fail("%d of %d runs died or failed; first ones:\n%s" %
                     (len(failures), RUNS, "\n".join(failures[:3])))

            # Files intact again: names come back (the copy path works).
            for path in (exe, dbg):
                p = seclib.run_as(user, ["cp", path + ".orig", path], env)
                check(p.returncode == 0, "restoring %s: %s" % (path, p.stderr))
            names_resolve(args.memtop, env, pid, ctx.path("after.json"))

            # A FIFO where the debug file was: nothing may block opening it.
            p = seclib.run_as(user, ["sh", "-c", 'rm "$0" && mkfifo "$0"', dbg], env)
            check(p.returncode == 0, "planting a FIFO: %s" % p.stderr)
            p = seclib.run_as(None, [args.memtop, "-p", pid, "--export", ctx.path("fifo.json")],
                              env, timeout=60)
            check(p.returncode == 0, "root's export with a FIFO as debug file: %s" %
                  seclib.e2elib.describe(p))
            frames = demo_frames(ctx.path("fifo.json"))
            check(any(f["function"] == "session_log_append" and not f["file"] for f in frames),
                  "without the debug file, names should come from .symtab: %s" % frames)
        finally:
            if cutter:
                seclib.e2elib.stop(cutter)
            seclib.e2elib.stop(target)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[0])
