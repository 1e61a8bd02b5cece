#!/usr/bin/env python3
"""sec_export_inplace.py -- `--export FILE` writes a user's own FILE in a directory the
user cannot write, as a shell's `>` would, and still refuses what it refused.

An export is written into a temporary file beside FILE and renamed into place
(out_file.c), so it needs to create a file in FILE's directory.  Before, a
user whose own file sits in a root-owned 0755 directory (a pre-created file
in a shared directory) got "cannot write FILE: Permission denied" where
`echo > FILE` works.  Now, where the directory refuses the temporary file,
FILE itself is written in place, on the descriptor that passed the checks
(not atomically).  User U runs `memtop --export FILE -- memtop-demo 1` in a
root-owned 0755 directory and in a sticky world-writable one (/tmp-like,
which never failed: the rename is allowed over U's own file).  Asserts:
  - U's own file (0644, one link): exit 0, a valid JSON export in it, in
    place in the root-owned directory (same inode and mode), no temporary
    file left;
  - in the same directory, still refused (exit 1, one line on stderr saying
    why, nothing changed, nothing created): a file of user O that U may
    write (0666), a symbolic link to U's own file, a second hard link to
    U's file, and a new name (the fallback is for an existing file only).
Skipped (77) unless root: it plays throwaway users (seclib.py).
"""
import os
import stat
import sys

import seclib
from seclib import check

OLD = b"an older export, longer than nothing\n"


def export_as(ctx, user, path):
    """U's `memtop --export path -- memtop-demo 1`: (exit status, stderr)."""
    shm = os.path.join(user.home, "shm")
    os.makedirs(shm, mode=0o700, exist_ok=True)
    os.chown(shm, user.uid, user.gid)
    cmd = [ctx.args.memtop, "--export", path, "--", ctx.args.demo, "1"]
    p = seclib.run_as(user, cmd, ctx.env_with(MEMTOP_SHM_DIR=shm))
    print("--export %s: exit %d: %s" % (os.path.relpath(path, ctx.workdir), p.returncode,
                                         p.stderr.strip()), flush=True)
    return p.returncode, p.stderr


def make_file(path, uid, gid, mode):
    with open(path, "wb") as f:
        f.write(OLD)
    os.chown(path, uid, gid)
    os.chmod(path, mode)


def written(ctx, user, path, in_place):
    """path, U's file, holds U's export after an exit 0."""
    before = os.stat(path)
    rc, err = export_as(ctx, user, path)
    check(rc == 0, "--export %s as %s: exit %d, expected 0: %s" % (path, user.name, rc,
                                                                  err.strip()))
    snap = seclib.e2elib.load_json(path)
    check(snap.get("memtop_snapshot") == 1 and isinstance(snap.get("traces"), list),
          "%s does not hold a JSON export: %r" % (path, str(snap)[:200]))
    after = os.lstat(path)
    check(stat.S_ISREG(after.st_mode) and after.st_uid == user.uid,
          "%s is no longer a regular file of %s's" % (path, user.name))
    if in_place:
        check(after.st_ino == before.st_ino and after.st_mode == before.st_mode,
              "%s was not written in place (inode %d -> %d, mode %o -> %o)" %
              (path, before.st_ino, after.st_ino, before.st_mode, after.st_mode))
    left = [n for n in os.listdir(os.path.dirname(path)) if n.startswith(".memtop-")]
    check(not left, "temporary files left beside %s: %s" % (path, left))


def refused(ctx, user, d, name, why, keep):
    """U's export to d/name fails, one line saying why, d as it was and
    keep (a path) unchanged."""
    path = os.path.join(d, name)
    listing = sorted(os.listdir(d))
    rc, err = export_as(ctx, user, path)
    lines = err.strip().splitlines()
    check(rc == 1, "--export %s as %s: exit %d, expected 1 (refused): %s" %
          (path, user.name, rc, err.strip()))
    check(len(lines) == 1 and "cannot write %s" % path in lines[0] and why in lines[0],
          "--export %s: not one line saying %r:\n%s" % (path, why, err))
    check(sorted(os.listdir(d)) == listing, "--export %s changed %s: %s" %
          (path, d, sorted(os.listdir(d))))
    with open(keep, "rb") as f:
        check(f.read() == OLD, "--export %s changed %s" % (path, keep))


def test(args):
    if os.geteuid() != 0:
        print("SKIP: plays throwaway users (useradd): needs root", flush=True)
        sys.exit(seclib.SKIP)
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (u, o):
        rootdir = ctx.path("rootdir")
        os.mkdir(rootdir)
        os.chmod(rootdir, 0o755)
        mine = os.path.join(rootdir, "mine.json")
        make_file(mine, u.uid, u.gid, 0o644)
        written(ctx, u, mine, in_place=True)

        sticky = seclib.shared_dir(ctx, "sticky")
        mine2 = os.path.join(sticky, "mine.json")
        make_file(mine2, u.uid, u.gid, 0o644)
        written(ctx, u, mine2, in_place=False)

        bait = os.path.join(rootdir, "bait.json")
        make_file(bait, u.uid, u.gid, 0o644)
        theirs = os.path.join(rootdir, "theirs.json")
        make_file(theirs, o.uid, o.gid, 0o666)
        refused(ctx, u, rootdir, "theirs.json", "belongs to another user", theirs)
        os.symlink(bait, os.path.join(rootdir, "link.json"))
        refused(ctx, u, rootdir, "link.json", "symbolic link", bait)
        os.link(bait, os.path.join(rootdir, "hard.json"))
        refused(ctx, u, rootdir, "hard.json", "other hard links", bait)
        refused(ctx, u, rootdir, "new.json", "Permission denied", bait)


seclib.main(test, __doc__)
