#!/usr/bin/env python3
"""check_batch_group.py -- `memtop --batch -g function|module` prints one row per group.

Why it exists: -g is documented for every mode, and `--batch` used to ignore
it (one row per trace whatever -g said).  memtop-demo's handle_request()
allocates from several call sites (parse buffers, a response grown with
realloc): grouped by function they are one row, whose allocations are the
sum of the per-trace rows; grouped by module every row of the demo is one.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

HEADER = re.compile(r"^\s+LIVE\s+BLOCKS\s+ALLOCS\s+TEMP\s+GROWTH\s+LEAK\s+(\S+)\s+\((.*)\)$")


def table(text):
    """The last report's column title, its note and its rows (columns split)."""
    lines = text.splitlines()
    heads = [i for i, ln in enumerate(lines) if HEADER.match(ln)]
    check(heads, "no table header in:\n" + text)
    m = HEADER.match(lines[heads[-1]])
    rows = []
    for ln in lines[heads[-1] + 1:]:
        if not ln.strip():
            break
        rows.append(ln.split(None, 9))  # LIVE and rate values hold a space: "1.0 KiB"
    return m.group(1), m.group(2), rows


def where(row):
    """The LOCATION/FUNCTION/... cell: everything after the rate ("/s") and
    the LEAK score."""
    line = " ".join(row)
    return line[line.index("/s") + 2:].split(None, 1)[1].strip()


def run(args, ctx, group):
    cmd = [args.memtop, "--batch", "-n", "1", "-d", "1", "--top", "0", "-g", group, "--",
           args.demo, "2"]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, "%s exited %s\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, e2elib.describe(proc)))
    return table(proc.stdout), proc


def test(args):
    ctx = e2elib.Ctx(args)
    (col, note, rows), proc = run(args, ctx, "trace")
    per_trace = [where(r) for r in rows if where(r).startswith("handle_request")]
    check(col == "LOCATION" and len(per_trace) >= 2,
          "expected handle_request on several trace rows:\n" + e2elib.describe(proc))

    (col, note, rows), proc = run(args, ctx, "function")
    names = [where(r) for r in rows]
    check(col == "FUNCTION" and "grouped by function" in note,
          "the header does not say FUNCTION / grouped by function:\n" + e2elib.describe(proc))
    check(names.count("handle_request") == 1,
          "handle_request is not exactly one row: %r\n%s" % (names, e2elib.describe(proc)))
    check(len(set(names)) == len(names), "a function on two rows: %r" % names)
    check("session_log_append" in names, "no session_log_append row: %r" % names)

    (col, note, rows), proc = run(args, ctx, "module")
    mods = [where(r) for r in rows]
    check(col == "MODULE" and mods.count("memtop-demo") == 1,
          "expected one memtop-demo row grouped by module: %r\n%s" %
          (mods, e2elib.describe(proc)))
    # A recording's summary (-f FILE --batch) groups its tables too.
    dat = ctx.path("demo.dat")
    env = dict(ctx.env, LD_PRELOAD=args.preload, MEMTOP_RECORD=dat)
    rec = e2elib.run([args.demo, "1"], env)
    check(rec.returncode == 0 and os.path.exists(dat), "recording failed:\n" +
          e2elib.describe(rec))
    cmd = [args.memtop, "-f", dat, "--batch", "--top", "0", "-g", "function"]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, "%s exited %s\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, e2elib.describe(proc)))
    col, note, rows = table(proc.stdout)
    rnames = [where(r) for r in rows]
    check(col == "FUNCTION" and rnames.count("handle_request") == 1,
          "the recording's summary is not grouped by function: %r\n%s" %
          (rnames, e2elib.describe(proc)))
    check(not ctx.segments(), "segments left behind: %s" % ctx.segments())
    print("ok: -g function rows %r; -g module rows %r; recording %r" % (names, mods, rnames))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
