#!/usr/bin/env python3
"""A module dlopen'ed by a relative path ("./libmtp_dlmod.so", then the
program leaves that directory): its frames must name the function and its
file:line, as with an absolute path -- not "[vdso]+0x..." without a file
(the loader's name for it is the relative string).  Exact counts too."""
import os
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, frame_module  # noqa: E402

WORK = 10
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "pf_dl_mod.c")
t = Test("dlrel")
libdir = os.path.join(os.path.dirname(t.bin), "lib")
with open(SRC) as f:
    KEEP_LINE = next(i for i, line in enumerate(f, 1) if "malloc(1543)" in line)
snap = t.run_all([t.prog("pf_dlrel"), libdir], 0)
if snap:
    work = t.check_marker(snap, 1531, "module loop", alloc=WORK, free=WORK)
    keep = t.check_marker(snap, 1543, "block handed out, kept", alloc=1, free=0, live=1)
    for m, fn in ((work, "dlmod_work"), (keep, "dlmod_keep")):
        for tr in m["traces"]:
            fr = (tr.get("frames") or [{}])[0]
            mod = frame_module(tr) or "?"
            t.log("%s: frames[0] = %s in %s at %s:%s" % (fn, fr.get("function"), mod,
                                                        fr.get("file"), fr.get("line")))
            t.check(mod.startswith("/") and os.path.basename(mod) == "libmtp_dlmod.so",
                    "%s's frames[0] lies in module %r, expected the absolute path of "
                    "libmtp_dlmod.so" % (fn, mod))
            t.check(fr.get("function") == fn and
                    os.path.basename(fr.get("file") or "") == "pf_dl_mod.c",
                    "%s's frames[0] is %r at %r, expected %s in pf_dl_mod.c" %
                    (fn, fr.get("function"), fr.get("file"), fn))
    for tr in keep["traces"]:
        line = (tr.get("frames") or [{}])[0].get("line")
        t.check(line == KEEP_LINE, "dlmod_keep's malloc is at pf_dl_mod.c:%s, expected :%d" %
                (line, KEEP_LINE))
t.finish()
