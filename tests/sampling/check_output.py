#!/usr/bin/env python3
"""check_output.py -- --sample / MEMTOP_SAMPLE, and how reports say "estimated".

Why it exists: sampled figures are estimates and must never be called
exact.  Checks: --batch says "data: sampled 1/512 KiB" and marks the
estimated figures "~", --batch --tree its call tree's headings; the JSON export has "sampling": {"rate_bytes": N}
with which figures are exact and which estimated, health.exact false and
--strict exits 3; memtop says "(sampled 1/512 KiB: estimates)" when it
writes any export (a CSV has no field for it); the text export marks every
per-trace figure "~" (live, blocks, peak, growth, allocs and their bytes,
frees, temporary), says "(~: estimated from samples)" above them and marks
the temporary count and its share, at most 100 %, in its header (an exact
run's text export marks nothing); an exact run has "sampling": null; MEMTOP_SAMPLE=1M
works on its own, a bad MEMTOP_SAMPLE gives one warning and exact mode,
a bad --sample or --sample without PROG is a usage error.
"""

import re

import samplib
from samplib import e2elib
from e2elib import check


def sites(args, rounds="1"):
    return [args.demo, rounds, "524288", "7"]


def test(args):
    ctx = e2elib.Ctx(args)
    p = e2elib.run([args.memtop, "--sample", "512k", "--batch", "--"] + sites(args), ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    final = p.stdout[p.stdout.rfind("memtop - "):]
    for want in ("data: sampled 1/512 KiB", "heap: ~", " blocks, peak ~", "~LIVE", "~BLOCKS",
                 "temporary ~"):
        check(want in final, "--batch lacks %r:\n%s" % (want, final))
    check("data: exact" not in p.stdout, "--batch calls sampled data exact")
    check("site_sixty" in final, "no site_sixty row:\n" + final)
    p = e2elib.run([args.memtop, "--sample", "512k", "--batch", "--tree", "--"] + sites(args),
                   ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    head = [ln for ln in p.stdout.splitlines() if "CALL TREE (" in ln]
    check(head and re.match(r"\s*~LIVE\s+~OWN\s+~BLOCKS\s+~GROWTH\s+LEAK\s", head[-1]),
          "--batch --tree does not mark its estimated columns:\n" + p.stdout)

    out = ctx.path("s.json")
    p = e2elib.run([args.memtop, "--sample", "512k", "--export", out, "--strict", "--"] +
                   sites(args), ctx.env)
    check(p.returncode == 3, "--strict on sampled data: exit %s, expected 3" % p.returncode)
    s = e2elib.load_json(out)
    smp = s.get("sampling")
    check(smp and smp["rate_bytes"] == 524288, "JSON sampling: %r" % smp)
    check("totals.alloc_count" in smp["exact"] and "totals.live_bytes" in smp["estimated"] and
          "traces" in smp["estimated"], "JSON does not say what is estimated: %r" % smp)
    check(s["health"]["exact"] is False and
          s["health"]["not_exact"].startswith("sampled 1/512 KiB"),
          "JSON health: %r" % s["health"])

    csv = ctx.path("s.csv")  # CSV has no field for it: the message says it
    p = e2elib.run([args.memtop, "--sample", "512k", "--export", csv, "--"] + sites(args), ctx.env)
    check(p.returncode == 0 and "(sampled 1/512 KiB: estimates)" in p.stderr,
          "--export of a CSV does not say sampled:\n" + e2elib.describe(p))

    check_text(args, ctx)

    out = ctx.path("e.json")
    p = e2elib.run([args.memtop, "--export", out, "--"] + sites(args), ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    e = e2elib.load_json(out)
    check("sampling" in e and e["sampling"] is None, "exact run: sampling %r" % e.get("sampling"))
    check("sampled" not in (e["health"]["not_exact"] or ""), "exact run says sampled")

    out = ctx.path("env.json")
    p = e2elib.run([args.memtop, "--export", out, "--"] + sites(args),
                   ctx.env_with(MEMTOP_SAMPLE="1M"))
    check(p.returncode == 0, e2elib.describe(p))
    check(e2elib.load_json(out)["sampling"]["rate_bytes"] == 1 << 20, "MEMTOP_SAMPLE=1M ignored")

    # "up to 1T" includes 1T, in the environment and on the command line
    out = ctx.path("env1t.json")
    p = e2elib.run([args.memtop, "--export", out, "--"] + sites(args),
                   ctx.env_with(MEMTOP_SAMPLE="1T"))
    check(p.returncode == 0 and "MEMTOP_SAMPLE" not in p.stderr, e2elib.describe(p))
    check(e2elib.load_json(out)["sampling"]["rate_bytes"] == 1 << 40, "MEMTOP_SAMPLE=1T ignored")
    out = ctx.path("opt1t.json")
    p = e2elib.run([args.memtop, "--sample", "1T", "--export", out, "--"] + sites(args), ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    check(e2elib.load_json(out)["sampling"]["rate_bytes"] == 1 << 40, "--sample 1T ignored")

    out = ctx.path("bad.json")
    p = e2elib.run([args.memtop, "--export", out, "--"] + sites(args),
                   ctx.env_with(MEMTOP_SAMPLE="12q"))
    check(p.returncode == 0, e2elib.describe(p))
    warn = [ln for ln in p.stderr.splitlines() if "MEMTOP_SAMPLE" in ln]
    check(len(warn) == 1, "expected one warning about MEMTOP_SAMPLE:\n" + p.stderr)
    check(e2elib.load_json(out)["sampling"] is None, "a bad MEMTOP_SAMPLE did not mean exact")

    for bad in (["--sample", "12q", "--", args.demo], ["--sample", "2T", "--", args.demo],
                ["--sample", "1M", "--batch", "-p", "1"]):
        p = e2elib.run([args.memtop] + bad, ctx.env)
        check(p.returncode == 2 and "--sample" in p.stderr,
              "%s: exit %s, %r" % (bad, p.returncode, p.stderr))
    print("ok")


TRACE_HEAD = re.compile(r"#\d+ (?:trace \d+|\(other: \d+ traces\)): live (~?)\S+ \S+ in (~?)\d+ "
                        r"blocks, peak (~?)\S+ \S+, growth (~?)\S+ \S+")
TRACE_FIGS = re.compile(r"   allocs (~?)\d+ \((~?)\S+ \S+\), frees (~?)\d+, temporary (~?)\d+")
TEMPORARY = re.compile(r"\| temporary (~?)\S+ \((~?)([\d.]+)%\)")


def text_marks(text):
    """The "~" marks of a text export ("~" or ""): one per per-trace figure,
    and its header's temporary count and share together, with the share."""
    marks = []
    for ln in text.splitlines():
        if ln.startswith(("#", "   allocs ")):
            m = TRACE_HEAD.fullmatch(ln) or TRACE_FIGS.fullmatch(ln)
            check(m, "a per-trace line of unknown shape: %r" % ln)
            marks += m.groups()
    m = TEMPORARY.search(text)
    check(m, "no temporary figure in the header:\n" + text)
    return marks, m.group(1) + m.group(2), float(m.group(3))


def check_text(args, ctx):
    """A sampled text export marks every figure of every trace; an exact one none."""
    out = ctx.path("s.txt")
    p = e2elib.run([args.memtop, "--sample", "512k", "--export", out, "--"] + sites(args, "2"),
                   ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    text = open(out).read()
    marks, temp, share = text_marks(text)
    check(len(marks) >= 8 and all(m == "~" for m in marks),
          "the sampled text export leaves per-trace figures unmarked:\n" + text)
    check("(~: estimated from samples)" in text, "no note on the ~ marks:\n" + text)
    check(temp == "~~" and share <= 100.0, "temporary share %s%.1f%%" % (temp, share))
    out = ctx.path("e.txt")
    p = e2elib.run([args.memtop, "--export", out, "--"] + sites(args), ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    text = open(out).read()
    marks, temp, _ = text_marks(text)
    check(marks and not any(marks) and not temp and "~" not in text,
          "an exact text export marks figures as estimates:\n" + text)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
