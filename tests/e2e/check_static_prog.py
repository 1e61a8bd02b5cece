#!/usr/bin/env python3
"""check_static_prog.py -- `memtop --batch -- PROG` says at once that a
statically linked PROG does not run libmemtop.so (preload_never.h).

Before, it printed nothing while PROG ran (for a static daemon: never),
then "exited without a memtop segment".  A static C program (cc -static;
skipped where the C library has no static archive) that runs 4 s:
  - direct: the line "./PROG (pid N) does not run libmemtop.so: it is
    statically linked" comes on stderr within 3 s, while PROG still runs;
    memtop waits for PROG (it does not end it) and exits 1 (nothing
    reported), with no report on stdout;
  - through a shell script that execs it (the shell is preloaded, the
    static program not): the same line, naming the program now run, within
    3 s of the exec (after the shell's own reports); exit 1.
"""

import os
import select
import shutil
import subprocess
import sys
import time

import e2elib
from e2elib import check, fail

STATIC_C = r"""
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 6;
    for (int i = 0; i < n * 10; i++) {
        free(malloc(100));
        usleep(100000);
    }
    return 0;
}
"""
SAID = "does not run libmemtop.so: it is statically linked"


def build_static(ctx):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        print("SKIP: no C compiler to build a static program", flush=True)
        sys.exit(e2elib.SKIP)
    src, exe = ctx.path("st.c"), ctx.path("st")
    with open(src, "w") as f:
        f.write(STATIC_C)
    proc = e2elib.run([cc, "-static", "-O1", src, "-o", exe], ctx.env)
    if proc.returncode != 0:
        print("SKIP: cannot link statically (libc6-dev's libc.a?): %s" % proc.stderr.strip(),
              flush=True)
        sys.exit(e2elib.SKIP)
    return exe


def said_in_time(proc, within, what):
    """The first stderr line of proc, read within `within` s, while proc runs."""
    deadline = time.monotonic() + within
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            fail("%s: nothing on stderr within %.0f s" % (what, within))
        r, _, _ = select.select([proc.stderr], [], [], left)
        if r:
            line = proc.stderr.readline()
            check(proc.poll() is None, "%s: PROG had ended when memtop said %r" % (what, line))
            return line


def batch(ctx, args, argv, what, within, name, shell_reported=False):
    cmd = [args.memtop, "--batch", "--"] + argv
    proc = subprocess.Popen(cmd, env=ctx.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ctx.workdir)
    try:
        line = said_in_time(proc, within, what)
        check(SAID in line and name in line, "%s: stderr says %r, not %r naming %s" %
              (what, line, SAID, name))
        out, err = proc.communicate(timeout=30)
    finally:
        e2elib.stop(proc)
    check(proc.returncode == 1, "%s: exit %s, expected 1 (nothing reported)\n%s" %
          (what, proc.returncode, err))
    # through a script, the shell's own reports (it is preloaded), none after
    check(("memtop - " in out) == shell_reported, "%s: the reports on stdout:\n%s" % (what, out))
    check(not err.strip(), "%s: more on stderr:\n%s" % (what, err))
    print("%s: %s" % (what, line.strip()))


def test(args):
    ctx = e2elib.Ctx(args)
    exe = build_static(ctx)
    batch(ctx, args, [exe, "4"], "direct", 3, exe)
    script = ctx.path("wrap.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nsleep 0.5\nexec %s 4\n" % exe)
    os.chmod(script, 0o755)
    batch(ctx, args, [script], "through a shell script", 3.5, "now " + exe, shell_reported=True)


if __name__ == "__main__":
    e2elib.main(test, __doc__)
