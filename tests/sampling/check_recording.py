#!/usr/bin/env python3
"""check_recording.py -- a sampled recording says its rate and replays to the live estimates.

Why it exists: a recording of a sampled target holds only the sampled
events; read as exact they would be wrong by the rate.  The file must say
it is sampled (version 8 in tick order, 6 in thread order; 7 in tick
order before paired tags, 6 in either before runs of references and
rising sizes, 5 in tick order and 4 in
thread order before FREE_PREV, 3 before NEXT_TRACE; the rate in its
PROCESS record,
docs/recording-format.md), and the replay must weigh its events as the
target did.  memtop --sample 64k --record rec.dat --export live.json --
sample_sites: the file's header says version 8 (tick order); `memtop -f rec.dat
--batch` says "sampled 1/64 KiB" and marks its figures "~"; `memtop -f
rec.dat --export` has "sampling": {"rate_bytes": 65536} and, per call site,
exactly the live bytes and blocks of the live export taken at exit; and the
events replayed add up to the target's final counters (else the replay
warns that they differ from the final state).  The process's counts of
allocations and frees: at the end, the target's exact ones (its final
TOTALS), equal to the live export's and listed as exact, the --batch
"total" unmarked; at a cursor halfway, where the file holds no exact
counts, estimates: listed as estimated in the JSON and marked "~" in
--batch and the text export.
"""

import struct

import samplib
from samplib import e2elib, site_sum
from e2elib import check

SITES = ("site_sixty", "site_thirty", "site_ten")


def test(args):
    ctx = e2elib.Ctx(args)
    rec, live, rep = ctx.path("rec.dat"), ctx.path("live.json"), ctx.path("replay.json")
    p = e2elib.run([args.memtop, "--sample", "64k", "--record", rec, "--export", live, "--",
                    args.demo, "2", "65536", "11"], ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    with open(rec, "rb") as f:
        version = struct.unpack("<I", f.read(12)[8:12])[0]
    check(version == 8, "a sampled recording is version %d, expected 8" % version)
    p = e2elib.run([args.memtop, "-f", rec, "--batch"], ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    for want in ("sampled 1/64 KiB: the events are samples", "sampled allocations",
                 "data: sampled 1/64 KiB", "heap: ~", "~LIVE"):
        check(want in p.stdout, "the replay summary lacks %r:\n%s" % (want, p.stdout))
    # the events, weighed as the target weighed them, add up to its final state
    check("differ from the recording's final state" not in p.stderr,
          "the replayed sampled events do not add up to the target's counters:\n" +
          e2elib.describe(p))
    check("events dropped" not in p.stdout + p.stderr,
          "a complete sampled recording says events were dropped:\n" +
          e2elib.describe(p))
    p = e2elib.run([args.memtop, "-f", rec, "--export", rep], ctx.env)
    check(p.returncode == 0, e2elib.describe(p))
    a, b = e2elib.load_json(live), e2elib.load_json(rep)
    check(b["sampling"] and b["sampling"]["rate_bytes"] == 65536, "replay: %r" % b["sampling"])
    check(b["health"]["not_exact"].startswith("sampled 1/64 KiB"), "replay health: %r" %
          b["health"])
    for s in SITES:
        for key in ("live_bytes", "live_count"):
            x, y = site_sum(a, s, key), site_sum(b, s, key)
            print("%-12s %-10s live export %d, replay %d" % (s, key, x, y))
            check(x == y and x > 0, "%s %s: the replay (%d) differs from the target's (%d)"
                  % (s, key, y, x))
    check_counts(args, ctx, rec, a, b)
    print("ok")


COUNTS = ("totals.alloc_count", "totals.alloc_bytes", "totals.free_count")


def total_line(text):
    """The report header's "rate: ... | total ... | temporary ..." line."""
    lines = [ln for ln in text.splitlines() if ln.startswith("rate: ")]
    check(lines, "no rate/total line:\n" + text)
    return lines[-1]


def check_counts(args, ctx, rec, live, end):
    """Exact counts at the end (the final TOTALS), estimates said so halfway."""
    for f in COUNTS:
        key = f.split(".")[1]
        x, y = live["totals"][key], end["totals"][key]
        print("%-20s live export %d, replay at the end %d" % (f, x, y))
        check(x == y, "%s: the replay's end (%d) is not the target's exact count (%d)" % (f, y, x))
    check(end["sampling"]["exact"] == list(COUNTS) and
          not set(COUNTS) & set(end["sampling"]["estimated"]),
          "replay's end: sampling %r" % end["sampling"])
    p = e2elib.run([args.memtop, "-f", rec, "--batch"], ctx.env)
    line = total_line(p.stdout)
    check("total ~" not in line and " | total " in line,
          "the end's exact totals are marked estimated: %r" % line)
    half = "%.3f" % (end["recording"]["duration_s"] / 2)
    mid, txt = ctx.path("mid.json"), ctx.path("mid.txt")
    for out in (mid, txt):
        p = e2elib.run([args.memtop, "-f", rec, "--at", half, "--export", out], ctx.env)
        check(p.returncode == 0, e2elib.describe(p))
    m = e2elib.load_json(mid)
    check(m["recording"]["at_end"] is False, "--at %s is at the end" % half)
    check(m["sampling"]["exact"] == [] and
          set(COUNTS) <= set(m["sampling"]["estimated"]),
          "halfway, the counts are estimates but the JSON says %r" % m["sampling"])
    p = e2elib.run([args.memtop, "-f", rec, "--at", half, "--batch"], ctx.env)
    for text, what in ((p.stdout, "--batch"), (open(txt).read(), "the text export")):
        line = total_line(text)
        check(" | total ~" in line and "allocs (~" in line and ", ~" in line,
              "halfway, %s does not mark the estimated totals: %r" % (what, line))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
