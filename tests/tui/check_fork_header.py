"""check_fork_header.py -- the viewer's header names a forked worker's parent.

A pre-fork server's parent and workers share one command line; --batch says
"(forked child)" and --list "[fork of PPID]", and the viewer's first header
line must too.  A preloaded perl forks a child that allocates (its segment
is made) and sleeps; `memtop -p CHILD` in tmux shows "pid CHILD (fork of
PARENT)" on the first line, `memtop -p PARENT` shows no "fork of" there;
q exits 0 each time and both processes still run.
"""
import os
import subprocess
import time

import tuilib
from tuilib import check, header_line

SCRIPT = r"""
my $pid = fork();
if ($pid == 0) { my @a = map { "x" x 100 } 1..1000; sleep 60; exit 0 }
open(my $f, ">", "$ARGV[0].tmp"); print $f "$pid\n"; close $f;
rename("$ARGV[0].tmp", $ARGV[0]);
sleep 60;
"""


def watch(t, pid, want):
    """memtop -p pid: the first header line once RUNNING, checked by want; then q."""
    t.start([t.memtop, "-p", pid], width=120, height=30)
    s = t.wait_for(lambda s: "RUNNING" in header_line(s, 0), "pid %d RUNNING" % pid)
    line = header_line(s, 0)
    check(want(line), "pid %d's header line: %r" % (pid, line))
    t.keys("q")
    st = t.wait_dead()
    check(st == 0, "q: memtop -p %d exited %s" % (pid, st))
    check(os.path.exists("/proc/%d" % pid), "pid %d ended with the viewer" % pid)


def test(t):
    script, pidfile = t.path("fork.pl"), t.path("child.pid")
    with open(script, "w") as f:
        f.write(SCRIPT)
    env = dict(t.env, LD_PRELOAD=os.path.abspath(t.args.preload))
    parent = subprocess.Popen(["perl", script, pidfile], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t.children.append(parent)
    deadline = time.monotonic() + tuilib.WAIT_S
    while not os.path.exists(pidfile):
        check(parent.poll() is None and time.monotonic() < deadline, "no child pid from perl")
        time.sleep(tuilib.STEP_S)
    child = int(open(pidfile).read())
    for pid in (parent.pid, child):
        seg = os.path.join(t.shm_dir, "memtop-%d" % pid)
        while not (os.path.exists(seg) and os.path.getsize(seg) > 0):
            check(time.monotonic() < deadline, "segment %s did not appear" % seg)
            time.sleep(tuilib.STEP_S)
    watch(t, child, lambda line: ("pid %d (fork of %d) " % (child, parent.pid)) in line)
    watch(t, parent.pid, lambda line: "pid %d " % parent.pid in line and "fork of" not in line)


if __name__ == "__main__":
    tuilib.main(test, __doc__)
