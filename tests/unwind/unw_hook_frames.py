#!/usr/bin/env python3
"""The allocation hooks that record a block give the own walker their frame
record (hook_libc.c: HOOK_FRAME): taking __builtin_frame_address(0) makes the
compiler set up a frame pointer, and the walker reads the caller's rbp at
[rbp] and the return address at [rbp + 8] (unwind_backtrace.h: mt_hook_frame).
That holds only if the hook pushes rbp while rsp still points at the return
address and then copies rsp to rbp, before anything else moves rsp.  This
test disassembles libmemtop.so (objdump) and checks that prologue in every
such hook, so that a compiler or flag change that breaks it fails here and
not only as wrong traces."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import SKIP, Test  # noqa: E402

HOOKS = ["malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "memalign",
         "aligned_alloc", "valloc", "pvalloc"]
MOVES_RSP = re.compile(r"^(push|pop|enter|leave)\b|,%rsp$|^(sub|add|and|lea|mov)\w*\s.*,%rsp$")

t = Test("unwind_hook_frames")
lib = os.environ.get("MTP_LIB", "")
objdump = shutil.which("objdump")
if not lib or not os.path.exists(lib) or not objdump:
    print("SKIP: needs libmemtop.so and objdump")
    sys.exit(SKIP)
dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib], capture_output=True,
                     text=True).stdout
funcs = {}
for block in dis.split("\n\n"):
    m = re.search(r"^[0-9a-f]+ <([^>]+)>:$", block, re.M)
    if m:
        funcs[m.group(1)] = [ln.split("\t", 1)[1].strip() for ln in block.splitlines()
                             if "\t" in ln]


def prologue_ok(insns):
    """push %rbp with nothing moving rsp before it, then mov %rsp,%rbp with
    nothing moving rsp in between."""
    i = 0
    while i < len(insns) and insns[i] != "push   %rbp":
        if MOVES_RSP.search(insns[i]) or insns[i].startswith(("ret", "jmp")):
            return "rsp moves before push %%rbp: %r" % insns[i]
        i += 1
    if i == len(insns):
        return "no push %rbp"
    for ins in insns[i + 1:]:
        if ins == "mov    %rsp,%rbp":
            return None
        if MOVES_RSP.search(ins):
            return "rsp moves before mov %%rsp,%%rbp: %r" % ins
    return "no mov %rsp,%rbp"


for hook in HOOKS:
    insns = funcs.get(hook)
    if t.check(insns is not None, "%s: not found in %s" % (hook, lib)):
        err = prologue_ok(insns)
        t.check(err is None, "%s: %s; first instructions: %s" % (hook, err, insns[:8]))
# the check itself: a function without a frame pointer must fail it
free_insns = funcs.get("free", [])
t.check(free_insns and prologue_ok(free_insns) is not None,
        "self-check: free (no frame record) passed the prologue check: %s" % free_insns[:8])
t.finish()
