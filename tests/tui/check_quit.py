"""check_quit.py -- leaving memtop restores the terminal and ends PROG.

Runs `memtop -- memtop-demo 60` from an interactive bash in tmux and ends it
one of five ways (--mode): q, Ctrl-C, kill -TERM <memtop pid>, kill -HUP
<memtop pid>, or a crash (kill -SEGV <memtop pid>).  Asserts: the shell's
prompt comes back; the alternate screen is left (tmux's alternate_on is 0 and
the screen shows the shell, not memtop's function bar); the keypad and cursor
key modes memtop switched on are off again; `stty -a` is exactly what it was
before memtop ran (so echo and icanon are on); and memtop's exit status is 0
for q (quitting a running PROG) and 128+N for signal N.  For the orderly ends
also: memtop told where PROG's output went and the demo is gone.  A crashed
viewer leaves PROG running (a viewer's crash must not take the program
down); the test ends it.
"""
import os
import re
import signal

import tuilib
from tuilib import check, frame

SIGNALS = {"int": signal.SIGINT, "term": signal.SIGTERM, "hup": signal.SIGHUP,
           "segv": signal.SIGSEGV}


def stty(t, name):
    """`stty -a` of the pane's terminal, run from its shell."""
    out = t.path(name)
    prompts = t.screen().count(tuilib.PROMPT)
    t.run_in_shell("stty -a > %s" % out)
    t.wait_prompt_back(prompts + 1)
    with open(out) as f:
        return f.read()


def test(t):
    mode = t.args.mode
    check(mode in ("q", "int", "term", "hup", "segv"), "unknown --mode %r" % mode)
    t.start_shell()
    before = stty(t, "stty-before.txt")
    check(re.search(r"(^|\s)echo(\s|$)", before) and re.search(r"(^|\s)icanon(\s|$)", before),
          "the shell's terminal has no echo/icanon to begin with:\n" + before)
    prompts = t.screen().count(tuilib.PROMPT)
    t.run_in_shell("%s -- %s 60" % (t.memtop, t.demo))
    t.wait_symbolized()
    check(t.alternate_on(), "memtop does not use the alternate screen")
    check(t.fmt("#{keypad_cursor_flag}") == "1",
          "memtop did not switch the cursor keys to application mode (keypad)")
    kids = t.children_of(t.pane_pid())
    check(len(kids) == 1, "expected memtop as the shell's only child, got %s" % kids)
    memtop_pid = kids[0]
    check(t.procs_with_argv0(t.demo), "the demo is not running under memtop")

    if mode == "q":
        t.keys("q")
    elif mode == "int":
        t.keys("C-c")
    else:
        os.kill(memtop_pid, SIGNALS[mode])

    # memtop's stderr line, then the prompt; the shell's screen, not memtop's.
    s = t.wait_prompt_back(prompts + 1)
    check(not t.alternate_on(), "the alternate screen is still on after memtop ended:\n" +
          frame(s))
    check("F10Quit" not in s and "RUNNING" not in s,
          "memtop's screen is still shown after it ended:\n" + frame(s))
    for flag in ("keypad_cursor_flag", "keypad_flag"):
        check(t.fmt("#{%s}" % flag) == "0", "%s is still on after memtop ended" % flag)
    if mode == "segv":
        demos = t.procs_with_argv0(t.demo)
        check(demos, "a crashed viewer took PROG down with it")
        for pid in demos:
            os.kill(pid, signal.SIGKILL)
    joined = t.screen(joined=True)
    check(mode == "segv" or re.search(r"memtop: the output of \S+ is in \S+memtop-\d+\.out", joined),
          "memtop did not say where PROG's output went:\n" + frame(joined))
    prompts = s.count(tuilib.PROMPT)
    t.run_in_shell("echo rc=$?")
    s = t.wait_for(lambda s: re.search(r"^rc=(\d+)$", s, re.M), "rc=N from echo $?")
    rc = int(s.group(1))
    t.wait_prompt_back(prompts + 1)
    after = stty(t, "stty-after.txt")
    check(after == before, "stty -a differs after memtop ended.\nbefore:\n%s\nafter:\n%s" %
          (before, after))
    t.wait_no_demo(timeout=10)
    check(memtop_pid not in t.children_of(t.pane_pid()), "memtop still runs")
    want = 0 if mode == "q" else 128 + SIGNALS[mode]
    check(rc == want, "memtop exited %d after %s, expected %d" % (rc, mode, want))


tuilib.main(test, __doc__)
