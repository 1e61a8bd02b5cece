#!/usr/bin/env python3
"""sec_rootlink.py -- a container's user cannot lead root's viewer out of the container.

Why it exists: the viewer reaches a target in another mount namespace
through /proc/PID/root, at the path the target's maps give for its
segment, ".../d/memtop-PID".  Every directory on that path belongs to the
target's user, who can swap "d" for a symlink to an absolute path.  The
kernel resolves such a link against the viewer's root, not the target's:
a plain open() with O_NOFOLLOW (which guards only the last name) went on
into the host's own files.  Now the path is resolved inside the target's
root (openat2 RESOLVE_IN_ROOT, src/ipc/proc_root.c).

The play, as root: a preloaded memtop-demo under `unshare -m` publishes in
T/d on a private tmpfs mounted over T.  Inside the namespace, a loop swaps
T/d with T/s, a symlink to "T/plant" (renameat2 RENAME_EXCHANGE): T/plant
does not exist in the container, and on the host it holds a planted
memtop-PID.  Meanwhile open_loop opens the segment as `memtop -p PID`
does, thousands of times.  Passes if no open reached the plant, some
crossed the link while it was swapped (the race was played: without the
fix, those reached the plant), and `memtop -p PID --batch` still shows the
target after the swapping stops.  The same again with open_loop in a
process where openat2 answers ENOSYS (Linux before 5.6): the path is then
walked one name at a time, and an open that meets the link refuses it.
"""

import ctypes
import errno
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

OPENS = 4000  # per round; each round sees hundreds of opens cross the link
ROUNDS = 5  # at most, until one crossing is seen
PLANT = b"PLANTED!" * 512
# What an open that crossed the swapped link ends with: with openat2 the
# link resolves inside the container, where nothing is at its target; the
# walk without openat2 follows no link.
FOUND_NOTHING, REFUSED_LINK = "no such segment", "not a memtop segment (symbolic link)"


def have_openat2():
    """Whether this process may call openat2 (Linux 5.6, no seccomp filter
    refusing it): a call with a bad fd says EBADF, not ENOSYS or EPERM."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(437, -1, None, None, 0)  # SYS_openat2 on x86-64 and arm64
    return ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM)

# Run inside the target's mount namespace: swaps a and b until the file
# argv[3] exists, an even number of times (a is the real directory again),
# and prints how many swaps it made.
SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
AT_FDCWD, RENAME_EXCHANGE = -100, 2
n = 0
while n == 0 or not os.path.exists(stop):
    for _ in range(500):
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 500
print(n, flush=True)
"""


def start_target(ctx, args, top):
    inner = ("mount -t tmpfs -o size=16m memtop-ns {t} && mkdir {t}/d && ln -s {t}/plant {t}/s "
             "&& exec env LD_PRELOAD={lib} MEMTOP_SHM_DIR={t}/d {demo} 300").format(
                 t=top, lib=args.preload, demo=args.demo)
    proc = subprocess.Popen(["unshare", "-m", "sh", "-c", inner], env=ctx.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)

    def mapped():
        if proc.poll() is not None:
            e2elib.unshare_ended(proc)
        try:
            with open("/proc/%d/maps" % proc.pid) as f:
                return "%s/d/memtop-%d" % (top, proc.pid) in f.read()
        except OSError:
            return False

    e2elib.wait_for(mapped, "the target's segment in its namespace")
    return proc


def swap_round(args, pid, top, empty, stop, mode):
    """One round of open_loop beside the swapper (mode: [] or
    ["no-openat2"]); its outcomes as {message: count}."""
    swapper = subprocess.Popen(
        ["nsenter", "-t", str(pid), "-m", "--", sys.executable, "-c", SWAPPER,
         top + "/d", top + "/s", stop],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)  # swapping
        p = e2elib.run([args.open_loop, str(pid), empty, str(OPENS)] + mode, None)
    finally:
        open(stop, "w").close()
        out, err = swapper.communicate(timeout=60)
        os.unlink(stop)
    check(swapper.returncode == 0 and out.strip().isdigit(), "the swapper failed: %s" % err)
    check(p.returncode == 0, "open_loop failed: %s" % e2elib.describe(p))
    outcomes = {}
    for line in p.stdout.splitlines():
        count, msg = line.split(" ", 1)
        outcomes[msg] = int(count)
    print("round%s: %s swaps, outcomes %s" % (" " + mode[0] if mode else "", out.strip(),
                                              outcomes), flush=True)
    return outcomes


def play(args, pid, top, empty, stop, mode):
    """Rounds of open_loop beside the swapper until one crossed the link.
    An open that crossed it ends "no such segment" with openat2 (the link
    resolved inside the container) or "symbolic link" without (the walk
    follows none); any other outcome but "ok" reached the host's plant."""
    crossed_as = FOUND_NOTHING if not mode and have_openat2() else REFUSED_LINK
    crossed = 0
    for _ in range(ROUNDS):
        outcomes = swap_round(args, pid, top, empty, stop, mode)
        reached = {m: c for m, c in outcomes.items() if m not in ("ok", crossed_as)}
        check(not reached, "the viewer left the target's root for the host's plant "
              "(or failed otherwise): %s" % outcomes)
        check(outcomes.get("ok", 0) > 0, "no open found the real segment: %s" % outcomes)
        crossed += outcomes.get(crossed_as, 0)
        if crossed:
            return
    check(crossed > 0, "in %d rounds no open crossed the swapped link: the race was "
          "never played, nothing was checked" % ROUNDS)


def test(args):
    e2elib.skip_unless_root()
    ctx = e2elib.Ctx(args)
    top, empty = ctx.path("ns"), ctx.path("empty")
    os.makedirs(os.path.join(top, "plant"))
    os.mkdir(empty)  # the viewer's own directory: nothing there, so the maps are read
    proc = start_target(ctx, args, top)
    try:
        plant = os.path.join(top, "plant", "memtop-%d" % proc.pid)
        with open(plant, "wb") as f:  # on the host, under the namespace's tmpfs
            f.write(PLANT)
        for mode in ([], ["no-openat2"]):
            play(args, proc.pid, top, empty, ctx.path("stop"), mode)
        p = e2elib.run([args.memtop, "-p", str(proc.pid), "--batch", "-n", "1"],
                       ctx.env_with(MEMTOP_SHM_DIR=empty))
        check(p.returncode == 0 and "memtop-demo" in p.stdout,
              "the target should still be shown: %s" % e2elib.describe(p))
    finally:
        e2elib.stop(proc)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[0])
