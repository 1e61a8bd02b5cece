#!/usr/bin/env python3
"""Binaries memtop cannot (or must not) symbolize from: a stripped copy
(strip --strip-all), a binary deleted while it ran, and one replaced by a
different build while it ran, exported after the process exited (while
it runs, memtop reads its file through /proc/PID: check_live_files.py).
memtop must not crash, must give module + offset with the reason, and
must never take names from the wrong file.  --no-symbols gives module +
offset only."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check  # noqa: E402


def own_frames(snap, exe):
    return [fr for t in snap["traces"] for fr in t["frames"] if fr["module"] == exe]


def expect_reason(snap, exe, reason, what):
    frames = own_frames(snap, exe)
    check(frames, "%s: no frame in %s" % (what, exe))
    bad = [fr for fr in frames if fr["function"] is not None or fr["file"] is not None or
           fr["unresolved"] != reason or not symlib.is_hex(fr["offset"])]
    check(not bad, "%s: frames of %s should be module+offset with unresolved %r: %r" %
          (what, exe, reason, bad[:3]))
    print("ok: %s: %d frames, unresolved %r" % (what, len(frames), reason))


def build(a, name, *flags):
    exe = os.path.join(a.workdir, name)
    symlib.run([a.cc, "-O2", "-g"] + list(flags) +
               ["-o", exe, os.path.join(a.source_dir, "sym_c.c")])
    return exe


def main():
    a = symlib.setup(__doc__)
    if not shutil.which("strip"):
        symlib.skip("strip (binutils) is not installed")
    exe = build(a, "sym_c")

    stripped = os.path.join(a.workdir, "stripped")
    shutil.copy(exe, stripped)
    symlib.run(["strip", "--strip-all", stripped])
    expect_reason(symlib.export(a, "stripped", [stripped]), stripped, "no symbols", "stripped")
    out = symlib.run([a.memtop, "--batch", "--", stripped], env=a.env).stdout
    check("stripped+0x" in out and "[no symbols]" in out,
          "--batch of a stripped binary shows no module+offset [no symbols]:\n" + out)

    deleted = os.path.join(a.workdir, "deleted")
    shutil.copy(exe, deleted)
    snap = symlib.export(a, "deleted", [deleted, "--unlink-self"])
    check(not os.path.exists(deleted), "the program did not delete itself")
    expect_reason(snap, deleted, "file deleted", "deleted while running")

    replaced = os.path.join(a.workdir, "replaced")
    shutil.copy(exe, replaced)
    other = build(a, "other", "-O1", "-DOTHER_BUILD=1")
    snap = symlib.export(a, "replaced", [replaced, "--replace-self", other])
    expect_reason(snap, replaced, "binary replaced", "replaced while running")

    snap = symlib.export(a, "nosym", [exe], extra=["--no-symbols"])
    named = [fr for t in snap["traces"] for fr in t["frames"]
             if fr["function"] or fr["file"] or fr["inlined"]]
    check(not named, "--no-symbols still symbolized: %r" % named[:3])
    print("ok: --no-symbols gives module+offset only")
    symlib.passed()


main()
