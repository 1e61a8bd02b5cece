#!/usr/bin/env python3
"""check_exec.py -- a tracked process that execs says so.

Why it exists: exec replaces the program without running destructors.  If
the new program does not load libmemtop.so (its environment has no
LD_PRELOAD), the pid's segment used to stay "running" for ever with its
last periodic snapshot: numbers that looked live and were not.  Now the
exec hook publishes a final snapshot marked exec'd.  This runs python3
preloaded, which:
  1. execs a path that does not exist (the exec fails): the segment must
     say "running" again afterwards;
  2. execs /bin/sleep with an environment without LD_PRELOAD: --list,
     --batch and the JSON export must say "exec'd" (the JSON also
     "execd": true, "exited": false), while the process runs on;
and a second python3 execs /bin/sleep keeping LD_PRELOAD: the new image
replaces the segment, which is "running" and names sleep.  A third execs a
shell without LD_PRELOAD that sleeps 2 s and then execs sleep with
LD_PRELOAD again: `memtop -p PID --batch`, started before, must report the
exec'd state and then go on to report sleep, running (an exec'd state is
final only while no tracked program takes over the pid).
"""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

SCRIPT = r"""
import os, sys, time
go = sys.argv[1]
try:
    os.execve("/nonexistent/memtop-exec-test", ["x"], {})
except OSError:
    pass
open(go + ".failed", "w").close()
while not os.path.exists(go):
    time.sleep(0.02)
env = dict(os.environ)
if sys.argv[2] == "keep":
    os.execve("/bin/sleep", ["sleep", "30"], env)
lib = env.pop("LD_PRELOAD")
if sys.argv[2] == "drop":
    os.execve("/bin/sleep", ["sleep", "30"], env)
os.execve("/bin/sh", ["sh", "-c", "sleep 2; exec env LD_PRELOAD=%s sleep 30" % lib], env)
"""


def list_row(ctx, pid):
    proc = e2elib.run([ctx.args.memtop, "--list"], ctx.env, timeout=30)
    check(proc.returncode == 0, "memtop --list failed:\n" + e2elib.describe(proc))
    pat = re.compile(r"^\s*%d\s" % pid)
    rows = [ln for ln in proc.stdout.splitlines() if pat.search(ln)]
    return rows[0] if rows else ""


def command_of(ctx, pid):
    # pid, state, live (2 words), uptime, rec, command
    row = list_row(ctx, pid).split(None, 6)
    return row[6] if len(row) == 7 else ""


def state_of(ctx, pid):
    row = list_row(ctx, pid)
    return row.split()[1] if row else ""


def run_one(ctx, mode):
    go = ctx.path("go-" + mode)
    py = e2elib.start_preloaded(ctx, ["python3", "-c", SCRIPT, go, mode])
    try:
        e2elib.wait_segment(ctx, py)
        e2elib.wait_for(lambda: os.path.exists(go + ".failed"), "the failed exec")
        st = state_of(ctx, py.pid)
        check(st == "running", "after a failed exec the state is %r, not running" % st)
        batch = None
        if mode == "gap":
            batch = subprocess.Popen([ctx.args.memtop, "-p", str(py.pid), "--batch", "-d", "0.3",
                                      "-n", "30"], env=ctx.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        open(go, "w").close()
        if mode == "drop":
            e2elib.wait_for(lambda: state_of(ctx, py.pid) == "exec'd",
                            "--list to say exec'd for pid %d" % py.pid)
            check(py.poll() is None, "the process should run on after exec (sleep 30)")
            batch = e2elib.run([ctx.args.memtop, "-p", str(py.pid), "--batch", "-n", "1"],
                               ctx.env, timeout=30)
            check(batch.returncode == 0 and "exec'd" in batch.stdout.splitlines()[0],
                  "--batch should say exec'd:\n" + e2elib.describe(batch))
            out = ctx.path("exec.json")
            exp = e2elib.run([ctx.args.memtop, "-p", str(py.pid), "--export", out], ctx.env,
                             timeout=30)
            check(exp.returncode == 0, "--export failed:\n" + e2elib.describe(exp))
            snap = e2elib.load_json(out)
            check(snap["state"] == "exec'd" and snap["execd"] is True and
                  snap["exited"] is False,
                  "export: state %r execd %r exited %r" %
                  (snap["state"], snap["execd"], snap["exited"]))
            check(snap["totals"]["alloc_count"] > 0, "export of the exec'd state has no data")
            print("ok: exec without the preload: %s" % list_row(ctx, py.pid).strip())
        elif mode == "gap":
            out, err = batch.communicate(timeout=60)
            heads = [ln for ln in out.splitlines() if ln.startswith("memtop - ")]
            execd = [i for i, ln in enumerate(heads) if "exec'd" in ln]
            after = [i for i, ln in enumerate(heads) if " running," in ln and i > (execd or [-1])[0]]
            check(execd and after, "--batch should report exec'd, then the new image running "
                  "(reports: %s); stderr: %s" % (heads, err))
            check(any(ln.startswith("command: sleep 30") for ln in out.splitlines()),
                  "--batch did not go on to the new image (sleep 30):\n" + out[-2000:])
            print("ok: --batch across an exec with a gap: %d reports exec'd, then running" %
                  len(execd))
        else:
            e2elib.wait_for(lambda: command_of(ctx, py.pid).startswith("sleep 30"),
                            "the new image's segment (sleep) for pid %d" % py.pid)
            st = state_of(ctx, py.pid)
            check(st == "running", "a preloaded new image's segment is %r, not running" % st)
            print("ok: exec keeping the preload: %s" % list_row(ctx, py.pid).strip())
    finally:
        e2elib.stop(py)


def test(args):
    ctx = e2elib.Ctx(args)
    run_one(ctx, "drop")
    run_one(ctx, "keep")
    run_one(ctx, "gap")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
