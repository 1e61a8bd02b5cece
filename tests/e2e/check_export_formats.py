#!/usr/bin/env python3
"""check_export_formats.py -- `memtop --export` writes CSV and text by FILE's extension.

Why it exists: the export format follows the file name (.json, .csv, else
text).  Runs memtop-exact under `memtop --export x.csv` and `--export x.txt`
and checks their shape: the CSV has a header and rows of equal width with
integer live_bytes/alloc_count columns whose live bytes cover what the
workload leaked; the text file names the program and carries numbers.
"""

import csv
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402


def export(ctx, args, name):
    out, ground = ctx.path(name), ctx.path(name + ".ground.json")
    cmd = [args.memtop, "--export", out, "--", args.exact, ground]
    proc = e2elib.run(cmd, ctx.env_with(MEMTOP_TEMP_MS=0))
    check(proc.returncode == 0, "%s exited %s\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, e2elib.describe(proc)))
    check(os.path.exists(out), "%s was not written" % out)
    truth = e2elib.load_json(ground)
    leaked = sum(s["live_bytes"] for s in truth["sites"].values())
    with open(out, encoding="utf-8") as f:
        return f.read(), leaked


def column(header, name):
    lower = [h.strip().lower() for h in header]
    check(name in lower, "CSV header has no %r column: %r" % (name, header))
    return lower.index(name)


def check_csv(ctx, args):
    text, leaked = export(ctx, args, "x.csv")
    rows = list(csv.reader(text.splitlines()))
    check(len(rows) >= 2, "CSV has no data rows:\n" + text[:2000])
    header, data = rows[0], rows[1:]
    check(not text.lstrip().startswith("{"), "x.csv holds JSON, not CSV")
    bad = [i for i, r in enumerate(data, 2) if len(r) != len(header)]
    check(not bad, "CSV rows %s do not have the header's %d fields" % (bad[:10], len(header)))
    live, allocs = column(header, "live_bytes"), column(header, "alloc_count")
    for r in data:
        check(r[live].strip().isdigit() and r[allocs].strip().isdigit(),
              "CSV row has non-integer live_bytes/alloc_count: %r" % r)
    total_live = sum(int(r[live]) for r in data)
    check(total_live >= leaked, "CSV live_bytes sum to %d, less than the %d bytes the workload "
          "leaked" % (total_live, leaked))
    print("ok: CSV with %d columns, %d rows" % (len(header), len(data)))


def check_text(ctx, args):
    text, _ = export(ctx, args, "x.txt")
    check(not text.lstrip().startswith("{"), "x.txt holds JSON, not text")
    check("memtop-exact" in text, "the text export does not name the program:\n" + text[:2000])
    lines = [ln for ln in text.splitlines() if ln.strip()]
    check(len(lines) >= 3, "the text export is too short:\n" + text)
    check(any(ch.isdigit() for ch in text), "the text export has no numbers")
    print("ok: text with %d lines" % len(lines))


def check_stdout(ctx, args):
    """`--export -` is standard output (text), `-.json` JSON there; no file
    named '-' or '-.json' is made (before: a file named '-')."""
    for name, starts in (("-", "memtop"), ("-.json", "{")):
        cmd = [args.memtop, "--export", name, "--", args.exact, ctx.path("so.ground.json")]
        proc = e2elib.run(cmd, ctx.env_with(MEMTOP_TEMP_MS=0), cwd=ctx.path(""))
        check(proc.returncode == 0 and proc.stdout.lstrip().startswith(starts)
              and "memtop-exact" in proc.stdout and "wrote standard output" in proc.stderr,
              "--export %s: the snapshot on stdout\n%s" % (name, e2elib.describe(proc)))
        check(not os.path.exists(ctx.path(name)), "--export %s made a file named %s" % (name, name))
    print("ok: --export - and -.json write to standard output")


def test(args):
    ctx = e2elib.Ctx(args)
    check_csv(ctx, args)
    check_text(ctx, args)
    check_stdout(ctx, args)
    check(not ctx.segments(), "segments left behind: %s" % ctx.segments())


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
