"""check_errors.py -- failures before the screen is taken: one line, no terminal change.

Without a terminal (stdin /dev/null, stdout and stderr pipes):
  - `memtop -p 999999` (no such process) exits 1, prints exactly one line on
    stderr and nothing on stdout (no escape sequences);
  - `memtop -p <pid of a process without the preload>` exits 1, one line;
  - `memtop -- memtop-demo 60` exits 1 with one line (it needs a terminal),
    and leaves no demo running;
  - `memtop -- /nonexistent` exits 127 with one line.
In a terminal (bash in tmux): `memtop -p 999999` prints its one line, exits 1,
never switches to the alternate screen and leaves `stty -a` as it was.
"""
import os
import re
import subprocess
import time

import tuilib
from tuilib import check, frame


def run(t, argv):
    p = subprocess.run([t.memtop] + argv, env=t.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def one_line_error(t, argv, want_rc):
    rc, out, err = run(t, argv)
    what = "memtop %s" % " ".join(argv)
    check(rc == want_rc, "%s exited %d, expected %d; stderr: %r" % (what, rc, want_rc, err))
    check(out == b"", "%s wrote to stdout: %r" % (what, out[:200]))
    check(err.endswith("\n") and err.count("\n") == 1 and err.strip(),
          "%s: expected exactly one line on stderr, got %r" % (what, err))
    return err


def test(t):
    one_line_error(t, ["-p", "999999"], 1)
    plain = subprocess.Popen(["sleep", "60"], env=t.env, stdin=subprocess.DEVNULL)
    t.children.append(plain)
    one_line_error(t, ["-p", str(plain.pid)], 1)
    err = one_line_error(t, ["--", t.demo, "60"], 1)
    check("terminal" in err, "the no-terminal error does not say so: %r" % err)
    t.wait_no_demo(timeout=10)
    one_line_error(t, ["--", os.path.join(t.workdir, "nonexistent")], 127)

    # In a terminal: nothing of the screen is touched.
    t.start_shell(width=250)
    before = t.path("stty-before.txt")
    after = t.path("stty-after.txt")
    prompts = t.screen().count(tuilib.PROMPT)
    t.run_in_shell("stty -a > %s; %s -p 999999; echo rc=$?; stty -a > %s" %
                   (before, t.memtop, after))
    deadline = time.monotonic() + tuilib.WAIT_S
    while True:  # the alternate screen must never come up: look while waiting
        check(not t.alternate_on(), "memtop -p 999999 switched to the alternate screen")
        s = t.screen()
        if re.search(r"^rc=\d+$", s, re.M) and s.count(tuilib.PROMPT) > prompts:
            break
        check(time.monotonic() < deadline, "the command did not finish:\n" + frame(s))
        time.sleep(0.05)
    lines = s.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith("rc="))
    check(lines[i] == "rc=1", "memtop -p 999999 in a terminal: %s, expected rc=1" % lines[i])
    check(lines[i - 1].startswith("memtop") and tuilib.PROMPT in lines[i - 2],
          "expected exactly one memtop line between the command and rc=:\n" + frame(s))
    with open(before) as b, open(after) as a:
        check(b.read() == a.read(), "stty -a changed across memtop -p 999999")


tuilib.main(test, __doc__)
