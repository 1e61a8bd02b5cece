"""check_exec_follow.py -- the viewer follows its target through exec.

A process that execs publishes its state first, marked exec'd.  If the
program it becomes loads libmemtop.so too, that replaces the pid's segment,
and the viewer must follow: the exec'd state is final only while no
tracked program has taken over the pid.  (A viewer that took "exec'd" for
"exited" stayed on the old state for good.)
  1. `memtop -- sh -c 'sleep 3; exec memtop-demo 30'`: the header shows
     sh's command line first, then memtop-demo's, running, with its rows.
  2. A gap without the preload: sh execs env, which execs sh without
     LD_PRELOAD; that one sleeps 5 s, then execs env with LD_PRELOAD set
     again, which execs memtop-demo.  The header says EXEC'D for those
     5 s (env's state, or sh's when env exec'd before its segment was
     made), then shows memtop-demo running.
The sleeps leave each state on screen for several of the viewer's
one-second refreshes, also on a loaded machine.
"""
import shlex

import tuilib


def head(s):
    return s.split("\n")[0]


def demo_running(rows, s):
    return ("memtop-demo 30" in head(s) and "EXEC'D" not in head(s) and
            tuilib.row_for(rows, "session_log_append") is not None)


def test(t):
    t.start([t.memtop, "--", "sh", "-c", "sleep 3; exec %s 30" % t.demo])
    t.wait_for(lambda s: "sh -c sleep 3" in head(s), "sh's command line in the header")
    t.wait_rows(demo_running, "the demo (after sh's exec) in the header and its rows",
                timeout=30)
    t.keys("q")
    t.wait_dead()

    again = "sleep 5; exec env LD_PRELOAD=%s %s 30" % (shlex.quote(t.args.preload), t.demo)
    t.start([t.memtop, "--", "sh", "-c",
             "sleep 1; exec env -u LD_PRELOAD sh -c %s" % shlex.quote(again)])
    t.wait_for(lambda s: "EXEC'D" in head(s), "EXEC'D in the header", timeout=30)
    t.wait_rows(demo_running, "the demo after the gap without the preload", timeout=30)
    t.keys("q")
    t.wait_dead()


tuilib.main(test, __doc__)
