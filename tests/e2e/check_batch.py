#!/usr/bin/env python3
"""check_batch.py -- `memtop --batch -n 2 -- memtop-demo 3` prints frames of rows, exits 0.

Why it exists: batch mode (like `top -b`) is memtop's scriptable main job and
the README's first command.  Runs it on the demo and expects exit 0, no error
output, and at least two frames' worth of allocator rows on stdout.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

# A row: a line with at least three numbers in it (sizes, counts, ids).
NUMBER = re.compile(r"(?<![\w.])\d+(\.\d+)?[KMGTkmgt]?i?[Bb]?(?![\w.])")


def row_lines(text):
    return [ln for ln in text.splitlines() if len(NUMBER.findall(ln)) >= 3]


def test(args):
    ctx = e2elib.Ctx(args)
    cmd = [args.memtop, "--batch", "-n", "2", "--", args.demo, "3"]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, "%s exited %s\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, e2elib.describe(proc)))
    rows = row_lines(proc.stdout)
    check(len(rows) >= 2, "expected rows of numbers on stdout:\n" + e2elib.describe(proc))
    check("memtop-demo" in proc.stdout, "the frames do not name memtop-demo:\n" +
          e2elib.describe(proc))
    check(not ctx.segments(), "segments left behind: %s" % ctx.segments())
    print("ok: %d row lines, e.g. %r" % (len(rows), rows[-1].strip()))
    # -d below the target's publishing interval (1 s): a report per new
    # snapshot, never the same snapshot twice in a row (it printed snapshot
    # #3 two or three times, as if new)
    cmd = [args.memtop, "--batch", "-d", "0.2", "--", args.demo, "3"]
    proc = e2elib.run(cmd, ctx.env)
    seqs = re.findall(r"^memtop - .*snapshot #(\d+)$", proc.stdout, re.M)
    check(proc.returncode == 0 and len(seqs) >= 3 and
          all(a != b for a, b in zip(seqs, seqs[1:])),
          "-d 0.2: the reports' snapshots %s repeat one:\n%s" % (seqs, e2elib.describe(proc)))
    print("ok: -d 0.2 reports snapshots %s, none twice" % " ".join(seqs))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
