"""check_static_prog.py -- `memtop -- PROG` with a statically linked PROG
says on the status line that PROG does not run libmemtop.so.

Before, the viewer showed STARTING and "waiting for the target's first
snapshot..." for PROG's whole life.  A static C program (cc -static;
skipped where the C library has no static archive) running 30 s: within
5 s the status line says "pid N does not run libmemtop.so: it is
statically linked".
"""
import os
import shutil
import subprocess
import sys

import tuilib
from tuilib import check

STATIC_C = r"""
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
    for (int i = 0; i < 300; i++) {
        free(malloc(100));
        usleep(100000);
    }
    return 0;
}
"""


def build_static(t):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    src, exe = t.path("st.c"), t.path("st")
    with open(src, "w") as f:
        f.write(STATIC_C)
    p = subprocess.run([cc or "cc", "-static", "-O1", src, "-o", exe], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) if cc else None
    if not p or p.returncode != 0:
        print("SKIP: cannot link a static program (a C compiler and libc6-dev's libc.a): %s" %
              (p.stderr.strip() if p else "no cc"), flush=True)
        sys.exit(77)
    return exe


def test(t):
    exe = build_static(t)
    t.start([t.memtop, "--", exe], width=160)
    s = t.wait_for("does not run libmemtop.so", timeout=5)
    check("statically linked" in s, "the status line does not say why:\n%s" % s)


tuilib.main(test, __doc__)
