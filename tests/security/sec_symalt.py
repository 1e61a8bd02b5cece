#!/usr/bin/env python3
"""sec_symalt.py -- a target's user makes root's symbolizer open a FIFO named in their DWARF.

The attack: a local user runs a preloaded program built into their own
directory whose DWARF was shared out with dwz (`dwz -m`): its DIEs use
DW_FORM_GNU_strp_alt and DW_FORM_GNU_ref_alt, and its .gnu_debugaltlink
section names the alternate file, here a FIFO of theirs.  memtop's guarded
debug-file search declines the alternate file, but libdw (elfutils 0.188)
then opens the name itself, blocking, the first time a DIE needs it: root's
`memtop --export` and `--batch` hung on the FIFO for ever.  Now another
user's module whose DWARF names other files (dwz alternate, split .dwo) is
symbolized from its symbol table only (src/symbolize/dwarf_refs.c).

Passes if root's export and batch finish and the program's own frames are
named from .symtab (function, no file).  A root-owned copy in a root-owned
directory (trusted) still gets its DWARF read as before; not tested here.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, fail  # noqa: E402


def build_target(home, demo, user):
    """memtop-demo dwz-compressed with a second copy; its altlink names a FIFO."""
    exe = os.path.join(home, "memtop-demo")
    twin = os.path.join(home, "twin")
    fifo = os.path.join(home, "alt.fifo")
    shutil.copy(demo, exe)
    shutil.copy(demo, twin)
    os.mkfifo(fifo)
    dwz = shutil.which("dwz", path="/usr/local/bin:/usr/bin:/bin")
    if not dwz:
        fail("dwz is not installed (scripts/install-deps.sh installs it)")
    p = subprocess.run([dwz, "-m", os.path.join(home, "common.debug"), "-M", fifo, exe, twin],
                       capture_output=True, text=True,
                       errors="replace")
    check(p.returncode == 0, "dwz -m failed: %s" % p.stderr)
    p = subprocess.run(["readelf", "--string-dump=.gnu_debugaltlink", exe], capture_output=True,
                       text=True, errors="replace")
    check(fifo in p.stdout, "dwz did not name the FIFO in .gnu_debugaltlink: %s" % p.stdout)
    p = subprocess.run(["readelf", "--debug-dump=info", exe], capture_output=True, text=True,
                       errors="replace")
    check("alt indirect string" in p.stdout, "dwz left no DW_FORM_GNU_strp_alt to follow")
    os.remove(os.path.join(home, "common.debug"))  # only the FIFO is left at the name
    for name in os.listdir(home):
        os.chown(os.path.join(home, name), user.uid, user.gid)
    return exe


def demo_frames(path):
    snap = seclib.e2elib.load_json(path)
    return [f for tr in snap["traces"] for f in tr["frames"]
            if f.get("module", "").endswith("/memtop-demo")]


def test(args):
    ctx = seclib.Ctx(args)
    shm = seclib.shared_dir(ctx, "shm")
    env = ctx.env_with(MEMTOP_SHM_DIR=shm)
    with seclib.throwaway_users(ctx, 1) as (user,):
        exe = build_target(user.home, args.demo, user)
        target = seclib.start_as(user, [exe, "600"], ctx.env_with(MEMTOP_SHM_DIR=shm,
                                                                  LD_PRELOAD=args.preload))
        try:
            seg = os.path.join(shm, "memtop-%d" % target.pid)
            seclib.e2elib.wait_for(lambda: os.path.exists(seg) and target.poll() is None,
                                   "the target's segment %s" % seg)
            pid = str(target.pid)
            time.sleep(0.5)  # a few ticks: every allocation site has been seen
            out = ctx.path("alt.json")
            p = seclib.run_as(None, [args.memtop, "-p", pid, "--export", out], env, timeout=60)
            check(p.returncode == 0, "root's export: %s" % seclib.e2elib.describe(p))
            frames = demo_frames(out)
            check(any(f["function"] == "session_log_append" and not f["file"] for f in frames),
                  "the program's frames should be named from .symtab: %s" % frames)
            p = seclib.run_as(None, [args.memtop, "-p", pid, "--batch", "-n", "1", "--top", "10"],
                              env, timeout=60)
            check(p.returncode == 0, "root's batch: %s" % seclib.e2elib.describe(p))
            check("session_log_append" in p.stdout, "batch should name the program's frames:\n%s"
                  % p.stdout)
        finally:
            seclib.e2elib.stop(target)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[0])
