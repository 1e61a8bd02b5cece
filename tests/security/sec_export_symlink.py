#!/usr/bin/env python3
"""sec_export_symlink.py -- `e` never writes through a symlink another user planted.

The attack (security issue 10.1): root watches a process from a sticky,
world-writable directory (its working directory and $TMPDIR).  The export's
default name memtop-PID-YYYYmmdd-HHMMSS.json is predictable to the second, so
user A plants symlinks at it (and at the -2, -3, ... names that follow) before
root presses `e`:
  dangling: links to a file that does not exist yet, in a directory only root
            may write: root would create it;
  swapped:  a loop that keeps putting a link to an existing root file in
            place and taking it away again, so a check (access) and the open
            that follows see different things: root would truncate the file.
Both run with fs.protected_symlinks 0 (links followed) and 1 (the kernel
refuses to follow them: then the export failed instead).  Asserts: the
dangling targets were not created, the root file is unchanged, and each
export went to a fresh regular file owned by root, mode 0600, that holds the
snapshot (the status line names it).  The same for the $TMPDIR fallback: user
B's viewer in a directory B cannot write, A's dangling links in $TMPDIR
pointing into B's home.  And `--export FILE` (a name the user
gives) neither follows A's symlink nor overwrites A's file, but overwrites
root's own file (and writes to /dev/null).
"""
import argparse
import os
import re
import stat
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tui"))
import seclib  # noqa: E402
from seclib import check, e2elib  # noqa: E402
import tuilib  # noqa: E402

# The attacker's interpreter: one every account may run (not a per-user install).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
SECRET = b"root's file: must stay as it is\n"

# User A's side: for the stamps of the last, this and the next second, the
# default names (and -2 .. -4) get a link (a fresh link renamed over the
# name); in "swap" mode the links come and go, a millisecond each way.
ATTACKER = r"""
import os, sys, time
shared, pid, mode, target = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
n = 0
while True:
    now = time.time()
    names = []
    for t in (now - 1, now, now + 1):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(t))
        for k in ("", "-2", "-3", "-4") if mode == "dangling" else ("",):
            names.append((os.path.join(shared, "memtop-%s-%s%s.json" % (pid, stamp, k)),
                          target + stamp + k if mode == "dangling" else target))
    for name, tgt in names:
        tmp = name + ".tmp%d" % n
        n += 1
        try:
            os.symlink(tgt, tmp)
            os.rename(tmp, name)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    time.sleep(0.05 if mode == "dangling" else 0.001)
    if mode == "swap":
        for name, tgt in names:
            try:
                os.unlink(name)
            except OSError:
                pass
        time.sleep(0.001)
"""


def tui_for(ctx, sub):
    args = argparse.Namespace(workdir=ctx.path(sub), demo=ctx.args.demo,
                              memtop=ctx.args.memtop, tmux="tmux")
    return tuilib.Tui(args, "sec" + sub)


def attack(ctx, user, shared, mode, protected):
    """One round: A's links in place, root presses e (twice for swap)."""
    secret_dir = ctx.path("rootonly-%s-%d" % (mode, protected))
    os.makedirs(secret_dir, mode=0o755)
    victim = os.path.join(secret_dir, "victim")
    with open(victim, "wb") as f:
        f.write(SECRET)
    target = os.path.join(secret_dir, "planted-") if mode == "dangling" else victim
    demo = e2elib.start_preloaded(ctx, [ctx.args.demo, "120"], TZ="UTC")
    t = tui_for(ctx, "tui-%s-%d" % (mode, protected))
    a, failed, taken = None, None, set()
    try:
        e2elib.wait_segment(ctx, demo)
        a = seclib.start_as(user, [PYTHON, "-c", ATTACKER, shared, str(demo.pid), mode,
                                   target], dict(ctx.env, TZ="UTC"))
        time.sleep(0.5)
        t.start("cd %s && exec %s -p %d" % (shared, t.memtop, demo.pid), width=250,
                MEMTOP_SHM_DIR=ctx.shm_dir, TMPDIR=shared, TZ="UTC")
        t.wait_for(lambda s: "LIVE" in s, "the viewer's table")
        for _ in range(2 if mode == "dangling" else 6):
            try:
                t.export_key(taken)
            except seclib.e2elib.TestFailure as e:
                failed = e  # what happened to root's files says more: checked first
                break
            time.sleep(0.3)
        t.keys("q")
    finally:
        if a:
            a.kill()
            a.wait()
        e2elib.stop(demo)
        t.cleanup()
    where = "(%s links, protected_symlinks=%d)" % (mode, protected)
    planted = sorted(n for n in os.listdir(secret_dir) if n != "victim")
    check(not planted, "root created %s in %s through A's links %s" % (planted, secret_dir, where))
    with open(victim, "rb") as f:
        got = f.read()
    check(got == SECRET, "root's file %s was changed through A's links %s: now %r" %
          (victim, where, got[:80]))
    if failed:
        raise failed
    for path in sorted(taken):
        check(os.path.dirname(path) == shared, "export %s is not in %s %s" % (path, shared, where))
        st = os.lstat(path)
        check(stat.S_ISREG(st.st_mode) and st.st_uid == 0 and st.st_nlink == 1,
              "export %s is not a fresh regular file of root's %s" % (path, where))
        check(stat.S_IMODE(st.st_mode) == 0o600,
              "export %s has mode %04o, not 0600 %s" % (path, stat.S_IMODE(st.st_mode), where))
        check(re.fullmatch(r"memtop-%d-\d{8}-\d{6}(-\d+)?\.json" % demo.pid,
                           os.path.basename(path)), "unexpected export name %s" % path)
    print("%s: exports %s; %s untouched, nothing created in %s" %
          (where, [os.path.basename(p) for p in sorted(taken)], victim, secret_dir))


def fallback(ctx, attacker, victim, shared, protected):
    """The $TMPDIR fallback: user B's viewer runs in a directory B cannot
    write, so the default name is made in $TMPDIR (the shared directory),
    where A keeps dangling links into B's home."""
    where = "(TMPDIR fallback, protected_symlinks=%d)" % protected
    ro = ctx.path("ro-%d" % protected)
    os.makedirs(ro, mode=0o755)
    shm = ctx.path("shm-b-%d" % protected)
    os.makedirs(shm, mode=0o700)
    os.chown(shm, victim.uid, victim.gid)
    before = set(os.listdir(victim.home))
    env = dict(ctx.env, TZ="UTC", MEMTOP_SHM_DIR=shm)
    demo = seclib.start_as(victim, [ctx.args.demo, "120"],
                           dict(env, LD_PRELOAD=ctx.args.preload))
    t = tui_for(ctx, "tui-fallback-%d" % protected)
    a, taken = None, set()
    try:
        e2elib.wait_for(lambda: os.path.exists(os.path.join(shm, "memtop-%d" % demo.pid)),
                        "B's segment")
        a = seclib.start_as(attacker, [PYTHON, "-c", ATTACKER, shared, str(demo.pid), "dangling",
                                       os.path.join(victim.home, "planted-")], env)
        time.sleep(0.5)
        t.start("cd %s && exec setpriv --reuid=%d --regid=%d --clear-groups %s -p %d" %
                (ro, victim.uid, victim.gid, t.memtop, demo.pid), width=250,
                MEMTOP_SHM_DIR=shm, TMPDIR=shared, TZ="UTC")
        t.wait_for(lambda s: "LIVE" in s, "B's viewer's table")
        t.export_key(taken)
        t.keys("q")
    finally:
        if a:
            a.kill()
            a.wait()
        e2elib.stop(demo)
        t.cleanup()
    made = sorted(set(os.listdir(victim.home)) - before)
    check(not made, "B's viewer created %s in B's home through A's links %s" % (made, where))
    for path in taken:
        st = os.lstat(path)
        check(os.path.dirname(path) == shared and stat.S_ISREG(st.st_mode) and
              st.st_uid == victim.uid and stat.S_IMODE(st.st_mode) == 0o600,
              "export %s is not a fresh 0600 file of B's in %s %s" % (path, shared, where))
    print("%s: export %s; nothing created in B's home" %
          (where, [os.path.basename(p) for p in taken]))


def named(ctx, user, shared):
    """--export FILE where FILE is A's: a symlink to root's file, A's own
    file (refused, both unchanged); root's own file is overwritten, and
    /dev/null (a character device) written."""
    victim = ctx.path("named-victim")
    with open(victim, "wb") as f:
        f.write(SECRET)
    link, theirs, mine = (os.path.join(shared, n) for n in ("link.json", "a.json", "mine.json"))
    seclib.run_as(user, ["ln", "-s", victim, link], ctx.env)
    seclib.run_as(user, ["sh", "-c", "echo A > %s" % theirs], ctx.env)
    with open(mine, "w") as f:
        f.write("old\n")
    demo = e2elib.start_preloaded(ctx, [ctx.args.demo, "60"])
    try:
        e2elib.wait_segment(ctx, demo)
        for path, ok in ((link, False), (theirs, False), (mine, True), ("/dev/null", True)):
            p = seclib.run_as(None, [ctx.args.memtop, "-p", str(demo.pid), "--export", path],
                              ctx.env)
            print("--export %s: exit %d: %s" % (os.path.basename(path), p.returncode,
                                                 p.stderr.strip()))
            check((p.returncode == 0) == ok, "--export %s: exit %d, expected %s: %s" %
                  (path, p.returncode, "0" if ok else "a failure", p.stderr.strip()))
    finally:
        e2elib.stop(demo)
    with open(victim, "rb") as f:
        check(f.read() == SECRET, "--export through A's symlink changed root's file")
    with open(theirs) as f:
        check(f.read() == "A\n", "--export overwrote A's file %s" % theirs)
    check(e2elib.load_json(mine)["pid"] == demo.pid, "--export did not overwrite root's own file")
    check(os.path.islink(link), "A's link was replaced")


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (a, b):
        shared = seclib.shared_dir(ctx, "shared")
        for protected in (0, 1):
            with seclib.sysctl("/proc/sys/fs/protected_symlinks", protected):
                for mode in ("dangling", "swap"):
                    attack(ctx, a, shared, mode, protected)
                fallback(ctx, a, b, shared, protected)
        with seclib.sysctl("/proc/sys/fs/protected_regular", 0), \
                seclib.sysctl("/proc/sys/fs/protected_symlinks", 0):
            named(ctx, a, shared)


seclib.main(test, __doc__)
