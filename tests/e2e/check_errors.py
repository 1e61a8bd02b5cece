#!/usr/bin/env python3
"""check_errors.py -- memtop's error cases: the exact one-line message, non-zero exit, no crash.

Why it exists: the issue requires every error (no such pid, a process without
libmemtop, a corrupt segment, bad options) to give a clear one-line message
and a non-zero exit, never a crash or a hang.  Each case checks the exit
status and the whole message (a regular expression: pids and paths vary), so
a changed or vaguer message fails.  Each case runs with a private, empty
MEMTOP_SHM_DIR.
"""

import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def expect_error(ctx, cmd, what, status, message):
    """cmd fails with exit `status` and the single stderr line `message`
    (a regular expression matched against the whole line)."""
    proc = e2elib.run(cmd, ctx.env, timeout=30)
    detail = "%s (%s)\n%s" % (e2elib.show_cmd(cmd), what, e2elib.describe(proc))
    check(proc.returncode > 0, "expected a non-zero exit (not a signal): " + detail)
    check(proc.returncode < 128, "exit status looks like a crash: " + detail)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    check(len(lines) == 1, "expected exactly one line on stderr: " + detail)
    check(proc.stdout.strip() == "", "expected nothing on stdout: " + detail)
    check(proc.returncode == status, "expected exit %d: %s" % (status, detail))
    check(re.fullmatch(message, lines[0]) is not None,
          "expected the message /%s/: %s" % (message, detail))
    print("ok: %s -> exit %d: %s" % (e2elib.show_cmd(cmd[1:]), proc.returncode, lines[0]))


def corrupt_segment(ctx, args):
    """A live process whose segment file holds garbage."""
    sleeper = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        seg = os.path.join(ctx.shm_dir, "memtop-%d" % sleeper.pid)
        fd = os.open(seg, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"this is not a memtop segment\n" * 1000)
        os.close(fd)
        bad = r"memtop: %s: not a memtop segment \(bad magic\)" % re.escape(seg)
        expect_error(ctx, [args.memtop, "-p", str(sleeper.pid), "--batch", "-n", "1"],
                     "corrupt segment", 1, bad)
        expect_error(ctx, [args.memtop, "-p", str(sleeper.pid), "--export",
                           ctx.path("corrupt.json")], "corrupt segment, export", 1, bad)
    finally:
        e2elib.stop(sleeper)


def nothing_to_wait_for(ctx, args):
    """A thread's id, and a process that started with MEMTOP_DISABLE=1: each
    said at once, not waited for as a segment still to come (2 s) and then
    called a process whose segment is yet to be made."""
    demo = e2elib.start_preloaded(ctx, [args.demo, "60"])
    try:
        e2elib.wait_segment(ctx, demo)
        tid = max(int(t) for t in os.listdir("/proc/%d/task" % demo.pid))
        check(tid != demo.pid, "the preloaded demo has a thread (its publisher)")
        expect_error(ctx, [args.memtop, "-p", str(tid), "--batch", "-n", "1"], "a thread's id", 1,
                     r"memtop: %d is a thread of process %d: memtop -p %d" %
                     (tid, demo.pid, demo.pid))
    finally:
        e2elib.stop(demo)
    off = e2elib.start_preloaded(ctx, [args.demo, "60"], MEMTOP_DISABLE="1")
    try:
        e2elib.wait_for(lambda: any("libmemtop" in line for line in
                                    open("/proc/%d/maps" % off.pid)), "the library mapped")
        t0 = time.monotonic()
        expect_error(ctx, [args.memtop, "-p", str(off.pid), "--batch", "-n", "1"],
                     "MEMTOP_DISABLE=1", 1,
                     r"memtop: process %d runs libmemtop.so with MEMTOP_DISABLE=1: it tracks "
                     r"nothing and creates no segment" % off.pid)
        took = time.monotonic() - t0
        check(took < 1.5, "MEMTOP_DISABLE=1 said without waiting (%.2f s)" % took)
    finally:
        e2elib.stop(off)


def bad_library(ctx, args):
    """MEMTOP_LIBRARY naming a file that is not a shared library: one line
    before PROG runs, not PROG run untracked and "exited without a memtop
    segment" after it (the loader only warned on PROG's stderr)."""
    env = ctx.env
    for path in ("/etc/passwd", "/dev/null"):
        ctx.env = dict(env, MEMTOP_LIBRARY=path)
        expect_error(ctx, [args.memtop, "--batch", "--", "true"], "MEMTOP_LIBRARY=" + path, 1,
                     r"memtop: MEMTOP_LIBRARY: %s: not a 64-bit ELF shared library"
                     % re.escape(path))
    ctx.env = env


def test(args):
    ctx = e2elib.Ctx(args)
    m = args.memtop
    help_ = r" \(see memtop --help\)"
    expect_error(ctx, [m, "-p", "999999", "--batch"], "no such pid", 1,
                 r"memtop: no such process: 999999")
    expect_error(ctx, [m, "-p", "abc"], "pid is not a number", 2,
                 r"memtop: -p: not a process id: 'abc'" + help_)
    expect_error(ctx, [m, "-s", "bogus", "-p", "1", "--batch"], "unknown sort key", 2,
                 r"memtop: -s: unknown sort key 'bogus' "
                 r"\(live, count, allocs, temporary, growth, leak\)" + help_)
    expect_error(ctx, [m, "--no-such-option"], "unknown option", 2,
                 r"memtop: bad option or missing value: --no-such-option" + help_)
    expect_error(ctx, [m, "-p", str(os.getpid()), "--batch", "-n", "1"],
                 "a process without libmemtop", 1,
                 r"memtop: process %d is not running with libmemtop.so "
                 r"\(no segment in %s, none mapped\)" % (os.getpid(), re.escape(ctx.shm_dir)))
    zombie = subprocess.Popen(["true"])  # not waited for: a zombie until the check is done
    e2elib.wait_for(lambda: open("/proc/%d/stat" % zombie.pid).read().rsplit(")", 1)[1].split()[0]
                    == "Z", "the zombie")
    expect_error(ctx, [m, "-p", str(zombie.pid), "--batch", "-n", "1"], "a zombie", 1,
                 r"memtop: process %d has exited \(a zombie its parent has not reaped\): its "
                 r"segment went with it" % zombie.pid)
    zombie.wait()
    expect_error(ctx, [m, "-p", "999999", "--export", ctx.path("x.json")], "export, no pid", 1,
                 r"memtop: no such process: 999999")
    expect_error(ctx, [m, "-p", "1", "--batch", "--tree", "--top", "5"], "--top with --tree", 2,
                 r"memtop: --top is for the table's rows, not --tree \(fold small nodes with "
                 r"--threshold BYTES\)" + help_)
    expect_error(ctx, [m, "-p", "1", "--batch", "--tree", "-g", "file"], "-g with --tree", 2,
                 r"memtop: -g groups the table's rows, not --tree \(one node per function\)" +
                 help_)
    paced = (r"memtop: -n and -d pace the reports of a running target; -f FILE reports one "
             r"moment \(--at SECONDS\)" + help_)
    for opts in (["--batch", "-n", "3"], ["--batch", "-d", "2"], ["--export", "/dev/null", "-n", "1"]):
        expect_error(ctx, [m, "-f", ctx.path("x.dat")] + opts, "-f with %s" % opts[-2], 2, paced)
    corrupt_segment(ctx, args)
    nothing_to_wait_for(ctx, args)
    bad_library(ctx, args)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
