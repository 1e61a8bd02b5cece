#!/usr/bin/env python3
"""check_pprof_mapping.py -- a pprof Mapping leads pprof's tools to each frame's own function.

Why it exists: pprof, Parca and Pyroscope find the ELF address of a
location as address - memory_start + file_offset (a file offset), then
through the file's program headers.  A Mapping that starts at the module's
lowest address with file offset 0 is right only when the code's file offset
equals its address (GNU ld); in an lld-linked program (and every Rust one)
each frame then resolved to another function.  fleet-mapleak, linked by
lld, is recorded under the preload and exported with --no-symbols; each of
its locations, mapped that way (program headers from readelf -lW, name from
addr2line), must name the function the symbolized export names at that
address, and must lie inside its Mapping; so must the name Go's `go tool
pprof -symbolize=local` gives (when go is installed), which ignores
file_offset (it names nothing in _start, which has no line table).  And Mapping 1, which pprof takes
for the main binary (`File:`), is the program, though the profile's first
location is in libc (strdup's).
"""

import os
import re
import shutil
import subprocess
import sys

import fleetlib
from fleetlib import check, e2elib

MAPLEAK = fleetlib.take_arg("--mapleak")


def loads(path):
    """The PT_LOAD program headers of path: [(offset, vaddr, filesz, flags)]."""
    out = subprocess.run(["readelf", "-lW", path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return [(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4))
            for m in re.finditer(r"^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+"
                                 r"(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+([RWE ]+?)\s+0x", out, re.M)]


def elf_address(phdrs, file_offset):
    """The virtual address of file_offset through phdrs, or None."""
    for off, vaddr, filesz, _ in phdrs:
        if off <= file_offset < off + filesz:
            return file_offset - off + vaddr
    return None


def addr2line(path, addrs):
    """The function at each of addrs in path, by addr2line."""
    out = subprocess.run(["addr2line", "-f", "-e", path] + ["0x%x" % a for a in addrs],
                         stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
    return out[0::2]


def go_names(ctx, path):
    """{address: the function `go tool pprof -symbolize=local` names there}
    (Go's own pprof: it takes memory_start - the code segment's p_vaddr for
    the load bias, ignoring file_offset), or None without go."""
    go = shutil.which("go")
    if not go:
        print("go missing (Debian golang-go): go tool pprof not asked")
        return None
    env = ctx.env_with(HOME=ctx.workdir, PPROF_TMPDIR=ctx.workdir, GOCACHE=ctx.path("gocache"))
    proc = e2elib.run([go, "tool", "pprof", "-raw", "-symbolize=local", path], env, timeout=120)
    check(proc.returncode == 0, "go tool pprof -raw failed:\n%s" % e2elib.describe(proc))
    return {int(m.group(1), 16): m.group(2) for m in
            re.finditer(r"^\s*\d+: (0x[0-9a-f]+) M=\d+ (\S+)", proc.stdout, re.M)}


def export(ctx, args, extra, name):
    out = ctx.path(name)
    proc = e2elib.run([args.memtop, "--export", out] + extra, ctx.env_with(MEMTOP_TEMP_MS=0))
    check(proc.returncode == 0, "memtop %s --export %s:\n%s" % (extra, name, e2elib.describe(proc)))
    return fleetlib.decode_pprof(out), out


def test(args):
    if not MAPLEAK or MAPLEAK == "-":
        print("SKIP: fleet-mapleak was not built (no lld: Debian package lld)", flush=True)
        sys.exit(fleetlib.SKIP)
    for tool, package in (("protoc", "protobuf-compiler"), ("readelf", "binutils"),
                          ("addr2line", "binutils")):
        fleetlib.need(tool, package)
    prog = os.path.realpath(MAPLEAK)
    phdrs = loads(prog)
    text = [p for p in phdrs if "E" in p[3]]
    check(len(text) == 1 and text[0][0] != text[0][1],
          "fleet-mapleak's code is at its own file offset, the test proves nothing: %r" % phdrs)
    ctx = e2elib.Ctx(args)
    rec = ctx.path("mapleak.dat")
    export(ctx, args, ["--record", rec, "--", prog], "live.pb.gz")
    bare, bare_path = export(ctx, args, ["-f", rec, "--no-symbols"], "bare.pb.gz")
    named, _ = export(ctx, args, ["-f", rec], "named.pb.gz")
    named_at = {loc["address"]: loc["lines"] for loc in named.locations.values()}
    ours = [(loc["address"], bare.mappings[loc["mapping"]]) for loc in bare.locations.values()
            if loc["mapping"] and bare.mappings[loc["mapping"]]["file"] == prog]
    check(ours, "no location of %s in the profile: %r" % (prog, bare.mappings))
    want = {}
    for addr, m in ours:
        check(m["start"] <= addr < m["limit"], "0x%x outside its mapping %r" % (addr, m))
        vaddr = elf_address(phdrs, addr - m["start"] + m["offset"])
        check(vaddr is not None, "0x%x: mapping %r gives a file offset in no segment" % (addr, m))
        want[addr] = vaddr
    names = dict(zip(want, addr2line(prog, list(want.values()))))
    for addr, name in names.items():
        lines = named_at.get(addr)
        check(lines, "0x%x is not named in the symbolized profile" % addr)
        check(lines[0][0] == name, "0x%x: pprof's way through the mapping leads to %r (ELF 0x%x), "
              "memtop names %r" % (addr, name, want[addr], lines[0][0]))
    go = go_names(ctx, bare_path)
    for addr, name in names.items() if go is not None else ():
        check(go.get(addr) in (name, None) and (go.get(addr) or name == "_start"),
              "0x%x: go tool pprof names %r, memtop %r" % (addr, go.get(addr), name))
    check({"copy_site", "leak_site", "main"} <= set(names.values()),
          "fleet-mapleak's frames: %r" % sorted(set(names.values())))
    check(bare.mappings.get(1, {}).get("file") == prog,
          "mapping 1 (pprof's main binary) is %r, not the program" % bare.mappings.get(1))
    print("ok: %d locations of %s lead through their mapping to memtop's function" %
          (len(names), os.path.basename(prog)))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
