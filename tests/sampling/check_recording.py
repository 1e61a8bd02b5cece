#!/usr/bin/env python3
"""check_recording.py -- a sampled recording says its rate and replays to the live estimates.

Why it exists: a recording of a sampled target holds only the sampled
events; read as exact they would be wrong by the rate.  The file must say
it is sampled (version 6 in either order; 5 in tick order and 4 in thread
order before FREE_PREV, 3 before NEXT_TRACE; the rate in its PROCESS record,
docs/recording-format.md), and the replay must weigh its events as the
target did.  memtop --sample 64k --record rec.dat --export live.json --
sample_sites: the file's header says version 6; `memtop -f rec.dat
--batch` says "sampled 1/64 KiB" and marks its figures "~"; `memtop -f
rec.dat --export` has "sampling": {"rate_bytes": 65536} and, per call site,
exactly the live bytes and blocks of the live export taken at exit; and the
events replayed add up to the target's final counters (else the replay
warns that they differ from the final state).
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
    check(version == 6, "a sampled recording is version %d, expected 6" % version)
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
    print("ok")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
