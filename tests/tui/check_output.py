"""check_output.py -- PROG's output goes to a file, never onto the screen.

PROG prints 200 lines to stdout and 200 to stderr (pausing every 50), then sleeps.
Asserts: the header shows "Output <path>" = $TMPDIR/memtop-<pid>.out; while
and after PROG prints, no "lineN"/"errN" text is on memtop's screen; the file
holds all 400 lines, in order per stream.
"""
import os
import re
import time

import tuilib
from tuilib import check, frame

N = 200
# Pauses every 50 lines, so the screen is looked at while PROG still prints.  (No
# sleep per line: each `sleep` is a new preloaded process, too slow by the 100.)
PROG = ("for i in $(seq %d); do echo line$i; echo err$i >&2; "
        "[ $((i %% 50)) = 0 ] && sleep 0.3; done; exec sleep 30" % N)


def test(t):
    t.start([t.memtop, "--", "sh", "-c", PROG], width=160, height=30)
    s = t.wait_for(lambda s: re.search(r"Output (\S+)", s), "'Output <path>' in the header")
    out = s.group(1)
    pid = int(re.search(r"memtop pid (\d+)", t.screen()).group(1))
    check(out == os.path.join(t.tmp_dir, "memtop-%d.out" % pid),
          "Output is %r, expected $TMPDIR/memtop-%d.out" % (out, pid))

    def text():
        try:
            with open(out) as f:
                return f.read()
        except OSError:
            return ""

    deadline = time.monotonic() + tuilib.WAIT_S
    while "err%d\n" % N not in text():
        s = t.screen()
        check(not re.search(r"\b(line|err)\d+", s), "PROG's output is on the screen:\n" +
              frame(s))
        check(time.monotonic() < deadline, "the output file did not get err%d; it has:\n%s" %
              (N, text()[-500:]))
        time.sleep(0.1)
    s = t.screen()
    check(not re.search(r"\b(line|err)\d+", s), "PROG's output is on the screen:\n" + frame(s))
    lines = text().split("\n")
    outs = [ln for ln in lines if ln.startswith("line")]
    errs = [ln for ln in lines if ln.startswith("err")]
    check(outs == ["line%d" % i for i in range(1, N + 1)],
          "stdout lines in the file are not line1..line%d" % N)
    check(errs == ["err%d" % i for i in range(1, N + 1)],
          "stderr lines in the file are not err1..err%d" % N)
    t.keys("q")
    check(t.wait_dead() == 0, "memtop did not exit 0 after q")


tuilib.main(test, __doc__)
