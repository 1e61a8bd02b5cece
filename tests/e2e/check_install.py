#!/usr/bin/env python3
"""check_install.py -- an installed memtop finds its installed libmemtop.so.

Why it exists: the README's install step is `cmake --install build`, and the
issue requires memtop to find its library when installed, not only in the
build tree.  Installs the build tree into a private prefix, checks the layout
(bin/memtop, <libdir>/memtop/libmemtop.so), runs the installed memtop on
memtop-exact (it must export the exit-time snapshot and pass the exit status
through), and checks in /proc/PID/maps that the program the installed memtop
starts maps the installed library, not the build tree's.
"""

import glob
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def test(args):
    ctx = e2elib.Ctx(args)
    prefix = ctx.path("prefix")
    cmd = [args.cmake, "--install", args.build_dir, "--prefix", prefix]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, "cmake --install failed:\n" + e2elib.describe(proc))
    memtop = os.path.join(prefix, "bin", "memtop")
    check(os.access(memtop, os.X_OK), "%s was not installed" % memtop)
    libs = glob.glob(os.path.join(prefix, "lib*", "**", "memtop", "libmemtop.so"), recursive=True)
    check(len(libs) == 1, "expected one installed <libdir>/memtop/libmemtop.so under %s, found %s"
          % (prefix, libs))
    out = ctx.path("installed.json")
    run = [memtop, "--export", out, "--", args.exact, ctx.path("ground.json"), "4"]
    proc = e2elib.run(run, ctx.env)
    check(proc.returncode == 4, "the installed memtop exited %s, expected 4:\n%s" %
          (proc.returncode, e2elib.describe(proc)))
    check(os.path.exists(out), "the installed memtop wrote no snapshot:\n" + e2elib.describe(proc))
    snap = e2elib.load_json(out)
    check(snap.get("exited") is True, "the installed memtop's snapshot is not the exit-time one")
    check(snap["totals"]["alloc_count"] > 0, "the installed memtop's snapshot counted nothing")
    check_mapped_lib(ctx, args, memtop, os.path.realpath(libs[0]))
    print("ok: installed to %s, library %s" % (prefix, os.path.relpath(libs[0], prefix)))


def children(pid):
    kids = []
    for task in glob.glob("/proc/%d/task/*/children" % pid):
        with open(task) as f:
            kids += [int(k) for k in f.read().split()]
    return kids


def mapped_memtop_libs(pid):
    try:
        with open("/proc/%d/maps" % pid) as f:
            return {ln.split()[-1] for ln in f if ln.rstrip().endswith("/libmemtop.so")}
    except OSError:
        return None


def check_mapped_lib(ctx, args, memtop, lib):
    """The program the installed memtop starts maps the installed library."""
    cmd = [memtop, "--batch", "-n", "1", "--", args.demo, "30"]
    proc = subprocess.Popen(cmd, env=ctx.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        def demo_maps():
            if proc.poll() is not None:
                e2elib.fail("%s exited early (%s): %s" %
                            (e2elib.show_cmd(cmd), proc.returncode, proc.stderr.read()))
            for kid in children(proc.pid):
                libs = mapped_memtop_libs(kid)
                if libs:
                    return libs
            return None
        libs = e2elib.wait_for(demo_maps, "the demo started by the installed memtop to map "
                               "libmemtop.so")
        check(libs == {lib}, "the installed memtop preloaded %s, expected %s" %
              (sorted(libs), lib))
        print("ok: the demo maps %s" % lib)
    finally:
        for kid in children(proc.pid):
            os.kill(kid, signal.SIGTERM)  # memtop's own child: the demo
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            e2elib.stop(proc)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
