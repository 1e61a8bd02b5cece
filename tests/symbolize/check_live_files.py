#!/usr/bin/env python3
"""Symbols from the file the process really maps (issue 13).

A running program whose binary was deleted, one whose binary was replaced
by a different build (an upgrade), and one whose binary exists only in its
own mount namespace (a tmpfs over its directory, as in a container): while
they run, `memtop -p PID --export` must name their functions (through
/proc/PID/map_files and /proc/PID/root, checked by build-id), never from
the wrong file: the replacement build's names are not taken.  Runs as root
(opening /proc/PID/map_files needs CAP_SYS_ADMIN; unshare too); skipped
otherwise (exit 77)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check  # noqa: E402

STAY = "--stay=120"
NAMES = {"exported_make", "static_make"}


def build(a, name, *flags):
    exe = os.path.join(a.workdir, name)
    symlib.run([a.cc, "-O2", "-g"] + list(flags) +
               ["-o", exe, os.path.join(a.source_dir, "sym_c.c")])
    return exe


def named(snap, exe, what):
    frames = [fr for t in snap["traces"] for fr in t["frames"]
              if symlib.same_module(fr["module"], exe)]
    names = {fr["function"] for fr in frames}
    check(NAMES <= names, "%s: functions of %s not named (got %r, reasons %r)" %
          (what, exe, sorted(n for n in names if n), sorted({str(fr["unresolved"])
                                                               for fr in frames})))
    check(all(fr["file"] and fr["file"].endswith("sym_c.c") for fr in frames
              if fr["function"] in NAMES), "%s: no source line from the debug info" % what)
    print("ok: %s: %d frames of %s named" % (what, len(frames), exe))


def live(a, exe, argv, what, wrap=()):
    proc = symlib.start_live(a, argv, wrap=wrap)
    try:
        snap, _ = symlib.export_live(a, what.replace(" ", "_"), proc.pid, exe)
        named(snap, exe, what)
    finally:
        symlib.stop(proc)


def main():
    a = symlib.setup(__doc__)
    if os.geteuid() != 0:
        symlib.skip("reading /proc/PID/map_files needs root")
    exe = build(a, "sym_c")

    deleted = os.path.join(a.workdir, "deleted")
    shutil.copy(exe, deleted)
    live(a, deleted, [deleted, "--unlink-self", STAY], "deleted while running")

    replaced = os.path.join(a.workdir, "replaced")
    shutil.copy(exe, replaced)
    other = build(a, "other", "-O1", "-DOTHER_BUILD=1", "-Dstatic_make=other_static_make")
    live(a, replaced, [replaced, "--replace-self", other, STAY], "replaced while running")
    snap = symlib.export(a, "replaced_gone", [replaced])  # now the other build, run to exit
    names = {fr["function"] for t in snap["traces"] for fr in t["frames"]
             if fr["module"] == replaced}
    check("other_static_make" in names and "static_make" not in names,
          "the replacement build is not told apart: %r" % sorted(n for n in names if n))

    if not shutil.which("unshare"):
        symlib.skip("the mount namespace part needs unshare")
    hidden = os.path.join(a.workdir, "ns")
    os.mkdir(hidden)
    inner = "mount -t tmpfs memtop-sym %s && cp %s %s/prog && exec %s/prog %s" % (
        hidden, exe, hidden, hidden, STAY)
    probe = subprocess.run(["unshare", "-m", "true"], stderr=subprocess.PIPE,
                           universal_newlines=True)
    if probe.returncode != 0:
        symlib.skip("unshare -m: %s" % probe.stderr.strip())
    prog = os.path.join(hidden, "prog")
    live(a, prog, ["sh", "-c", inner], "only in another mount namespace",
         wrap=["unshare", "-m"])
    check(not os.path.exists(prog), "the namespace's tmpfs is visible from the host")
    symlib.passed()


main()
