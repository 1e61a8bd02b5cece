#!/usr/bin/env python3
"""check_export_full.py -- a failed export leaves no file behind, and an
older file under its name as it was (out_file.c: written into a temporary
file beside it, renamed into place only once whole).

Before, `--export full/big.json` on a full disk said "No space left on
device", exited 1 and left big.json cut mid-string (or empty with 0 bytes
free), and an older big.json was emptied first.  A recording of 200
distinct backtraces (memtop-many-stacks) exports to 900 KB of JSON and
200 KB of CSV; here into a 64 KiB tmpfs in a private mount namespace
(`unshare -m`, root; skipped otherwise):
  - a new name: exit 1, one line on stderr saying why, no file left (no
    temporary one either);
  - an older file's name: exit 1, the older file intact;
  - with 0 bytes free: JSON and CSV, exit 1, nothing left;
  - a small export still replaces the older file, nothing else left.
"""

import os
import subprocess
import sys

import e2elib
from e2elib import check, fail

INNER = "MEMTOP_TEST_FULL_DIR"  # set in the namespace: the tmpfs to mount
OLD = b"an older export\n"


def listing(d):
    return sorted(os.listdir(d))


def export(args, env, dat, out, *extra):
    cmd = [args.memtop, "-f", dat] + list(extra) + ["--export", out]
    return cmd, e2elib.run(cmd, env)


def expect_refused(args, env, dat, out, left, what):
    cmd, proc = export(args, env, dat, out)
    err = proc.stderr.strip().splitlines()
    check(proc.returncode == 1, "%s: %s\n%s" % (what, e2elib.show_cmd(cmd), e2elib.describe(proc)))
    check(len(err) == 1 and "cannot write %s" % out in err[0] and
          "No space left on device" in err[0],
          "%s: not one line saying why:\n%s" % (what, proc.stderr))
    d = os.path.dirname(out)
    check(listing(d) == left, "%s: %s holds %s, expected %s" % (what, d, listing(d), left))


def fill(path):
    """Writes path until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0")
        except OSError:
            pass


def inner(args):
    """In the mount namespace: the checks on a 64 KiB tmpfs."""
    d, dat = os.environ[INNER], os.path.join(args.workdir, "rec.dat")
    env = {k: v for k, v in os.environ.items() if k not in (INNER, "LD_PRELOAD")}
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "memtop-full", d], check=True)
    old = os.path.join(d, "old.json")
    with open(old, "wb") as f:
        f.write(OLD)
    expect_refused(args, env, dat, os.path.join(d, "big.json"), ["old.json"], "a new name")
    expect_refused(args, env, dat, old, ["old.json"], "an older file's name")
    with open(old, "rb") as f:
        check(f.read() == OLD, "the older file was changed by the failed export")
    fill(os.path.join(d, "fill"))
    for ext in ("json", "csv"):
        expect_refused(args, env, dat, os.path.join(d, "zero." + ext), ["fill", "old.json"],
                       "0 bytes free, " + ext)
    os.unlink(os.path.join(d, "fill"))
    cmd, proc = export(args, env, dat, old, "--top", "1")
    check(proc.returncode == 0, "a small export: %s\n%s" % (e2elib.show_cmd(cmd),
                                                             e2elib.describe(proc)))
    check(listing(d) == ["old.json"], "after a small export %s holds %s" % (d, listing(d)))
    check(e2elib.load_json(old).get("memtop_snapshot") == 1, "old.json was not replaced")


def test(args):
    if os.environ.get(INNER):
        return inner(args)
    e2elib.skip_unless_root("needs root to mount a small tmpfs")
    ctx = e2elib.Ctx(args)
    dat = ctx.path("rec.dat")
    cmd = [args.many_stacks, ctx.path("ground.json"), "200", "200"]
    proc = e2elib.run(cmd, ctx.env_with(LD_PRELOAD=args.preload, MEMTOP_RECORD=dat))
    check(proc.returncode == 0, "recording: %s\n%s" % (e2elib.show_cmd(cmd),
                                                     e2elib.describe(proc)))
    full = ctx.path("full")
    os.mkdir(full)
    cmd = ["unshare", "-m", sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    proc = subprocess.run(cmd, env=dict(ctx.env, **{INNER: full}), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=e2elib.RUN_TIMEOUT_S)
    if "cannot change root filesystem propagation" in proc.stderr:
        print("SKIP: %s" % proc.stderr.strip(), flush=True)
        sys.exit(e2elib.SKIP)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        fail("in the mount namespace:\n%s" % (proc.stdout + proc.stderr).strip())


if __name__ == "__main__":
    e2elib.main(test, __doc__)
