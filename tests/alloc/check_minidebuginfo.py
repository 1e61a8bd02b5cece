#!/usr/bin/env python3
"""check_minidebuginfo.py -- the allocator scan reads MiniDebugInfo.

A stripped executable may name its functions only in an xz-compressed ELF
in its .gnu_debugdata section (alloc_elf.c).  alloc_mdi defines a static
PyObject_Malloc; the test strips its .symtab and adds a MiniDebugInfo
holding that symbol (the recipe of Fedora's find-debuginfo), then checks
that the preloaded program is said NOT exact because of pymalloc, and that
the same program without the section is not (so the finding came from the
MiniDebugInfo).  Needs binutils (nm, objcopy, strip) and xz."""
import argparse
import os
import shutil
import subprocess
import sys

NOTE = "CPython's pymalloc in"


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("check_minidebuginfo: %s failed:\n%s" % (" ".join(cmd), r.stderr))
    return r.stdout


def make(prog, work):
    exe = os.path.join(work, "mdi")
    dbg = os.path.join(work, "mdi.debug")
    shutil.copy(prog, exe)
    funcs = [ln.split()[0] for ln in sh(["nm", "--format=posix", "--defined-only", exe]).splitlines()
             if len(ln.split()) > 1 and ln.split()[1] in ("T", "t")]
    keep = os.path.join(work, "keep")
    with open(keep, "w") as f:
        f.write("\n".join(funcs) + "\n")
    sh(["objcopy", "--only-keep-debug", exe, dbg])
    sh(["objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
        "--keep-symbols=" + keep, dbg, dbg + ".min"])
    sh(["xz", "-f", dbg + ".min"])
    sh(["strip", "--strip-all", "-R", ".comment", exe])
    plain = exe + "-plain"
    shutil.copy(exe, plain)
    sh(["objcopy", "--add-section", ".gnu_debugdata=" + dbg + ".min.xz", exe])
    return exe, plain


def run(lib, exe, work):
    env = dict(os.environ, LD_PRELOAD=lib, MEMTOP_START_MS="0", MEMTOP_SHM_DIR=work)
    r = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0 or r.stdout != "ok\n":
        sys.exit("check_minidebuginfo: %s: exit %d, stdout %r, stderr:\n%s"
                 % (exe, r.returncode, r.stdout, r.stderr))
    return r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    for tool in ("nm", "objcopy", "strip", "xz"):
        if not shutil.which(tool):
            print("check_minidebuginfo: %s not installed: skipped" % tool)
            return 77
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    exe, plain = make(a.prog, a.workdir)
    errs = []
    if NOTE not in run(a.lib, exe, a.workdir):
        errs.append("pymalloc named only in .gnu_debugdata was not found")
    if NOTE in run(a.lib, plain, a.workdir):
        errs.append("pymalloc found without the MiniDebugInfo: the check proves nothing")
    for e in errs:
        print("FAIL: " + e)
    print("PASS" if not errs else "FAILED")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
