#!/usr/bin/env python3
"""check_fork_title.py -- a forked child shows its own command line and uptime.

Why it exists: a server's forked children (postgres backends) rename
themselves (`postgres: checkpointer`) after the fork; memtop showed the
command line its segment recorded (the parent's argv) and the parent's
tracking time as the child's uptime.  A preloaded perl sleeps 4 s, forks a
child that allocates (its segment is made) and then sets $0 (perl rewrites
its argv, and environ, in place), and then --batch on
the child must show the new title and an uptime at least 4 s shorter than
the parent's (read after it: no timing assumption), and --list and the JSON
export (`cmdline`, `uptime_s`) likewise; --list marks the child "[fork of
PARENT]" and not the parent (a pre-fork server's workers otherwise read as
copies of it).  And its growth window
(`growth_window_s`, --batch's "growth/s over the last ..."), the viewer's
graph and the leak score's checkpoints start at the fork: the parent's
checkpoints and timeline, copied into the child, made a postgres backend
"up 4s" show growth over 8 s and its start-up blocks leak suspects.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

TITLE = "memtop-title-child worker"
SCRIPT = r"""
sleep 4;
my $pid = fork();
if ($pid == 0) { my @a = map { "x" x 100 } 1..1000; sleep 1; $0 = "%s"; sleep 120; exit 0 }
open(my $f, ">", "$ARGV[0].tmp"); print $f "$pid\n"; close $f;
rename("$ARGV[0].tmp", $ARGV[0]);
sleep 120;
""" % TITLE


def seconds(text):
    """The seconds of a duration as mt_fmt_duration prints it (1h02m, 3m05s, 7s)."""
    total = 0
    for n, unit in re.findall(r"(\d+)([dhms])", text):
        total += int(n) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[unit]
    return total


def batch_head(args, ctx, pid):
    proc = e2elib.run([args.memtop, "-p", str(pid), "--batch", "-n", "1"], ctx.env, timeout=60)
    check(proc.returncode == 0, "memtop -p %d failed:\n%s" % (pid, e2elib.describe(proc)))
    m = re.search(r" up (\S+), ", proc.stdout)
    cmd = re.search(r"^command: (.*)$", proc.stdout, re.M)
    check(m and cmd, "no uptime or command in:\n" + proc.stdout)
    return seconds(m.group(1)), cmd.group(1), proc.stdout


def export_head(args, ctx, pid):
    """uptime_s and cmdline of `memtop -p PID --export FILE.json`; the
    growth window must lie within the process's life (a publish interval
    of slack: uptime is read with the export, the window with the
    snapshot)."""
    out = ctx.path("snap-%d.json" % pid)
    proc = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env, timeout=60)
    check(proc.returncode == 0, "memtop -p %d --export failed:\n%s" % (pid, e2elib.describe(proc)))
    snap = e2elib.load_json(out)
    up, window = float(snap["uptime_s"]), float(snap["growth_window_s"])
    check(window <= up + 1.0, "pid %d, up %.2f s, has a growth window of %.2f s (its parent's "
          "past)" % (pid, up, window))
    return up, snap["cmdline"]


def test(args):
    ctx = e2elib.Ctx(args)
    script, pidfile = ctx.path("title.pl"), ctx.path("child.pid")
    with open(script, "w") as f:
        f.write(SCRIPT)
    parent = e2elib.start_preloaded(ctx, ["perl", script, pidfile])
    child = None
    try:
        child = int(e2elib.wait_for(
            lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), "the child's pid"))
        seg = os.path.join(ctx.shm_dir, "memtop-%d" % child)
        e2elib.wait_for(lambda: os.path.exists(seg) and os.path.getsize(seg) > 0,
                        "the child's segment")
        e2elib.wait_for(lambda: TITLE in open("/proc/%d/cmdline" % child).read(), "the title")
        c_up, c_cmd, c_out = batch_head(args, ctx, child)
        p_up, p_cmd, _ = batch_head(args, ctx, parent.pid)
        check(c_cmd == TITLE, "the child's command is %r, not its own %r:\n%s" %
              (c_cmd, TITLE, c_out))
        check(c_up + 4 <= p_up, "the child (forked 4 s after its parent started) shows up %ds, "
              "its parent %ds:\n%s" % (c_up, p_up, c_out))
        listed = e2elib.run([args.memtop, "--list"], ctx.env, timeout=60)
        rows = [ln for ln in listed.stdout.splitlines() if ln.split()[:1] == [str(child)]]
        check(len(rows) == 1 and rows[0].endswith(TITLE),
              "--list does not show the child's own title:\n" + e2elib.describe(listed))
        check(("[fork of %d] " % parent.pid) in rows[0],
              "--list does not say the child is a fork of %d:\n%s" %
              (parent.pid, e2elib.describe(listed)))
        prow = [ln for ln in listed.stdout.splitlines() if ln.split()[:1] == [str(parent.pid)]]
        check(len(prow) == 1 and "[fork of" not in prow[0],
              "--list calls the parent a fork, or lacks it:\n" + e2elib.describe(listed))
        jc_up, jc_cmd = export_head(args, ctx, child)
        jp_up, _ = export_head(args, ctx, parent.pid)
        check(jc_cmd == TITLE, "the child's JSON cmdline is %r, not its own %r" % (jc_cmd, TITLE))
        check(jc_up + 4 <= jp_up, "the child's JSON uptime_s is %.3f, its parent's %.3f" %
              (jc_up, jp_up))
        print("ok: child %d %r up %ds, parent %r up %ds; JSON %.2f s vs %.2f s" %
              (child, c_cmd, c_up, p_cmd, p_up, jc_up, jp_up))
    finally:
        e2elib.end_pid(child)
        e2elib.stop(parent)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
