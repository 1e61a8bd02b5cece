"""check_sampled.py -- a sampled target's figures are marked as estimates on screen.

memtop --sample 64k -- memtop-demo.  Asserts: the Data field says "sampled
1/64 KiB" (never "exact"); the header's heap, peak and growth figures carry
"~"; the table's headings are "~LIVE", "~BLOCKS", "~GROWTH/s", "~ALLOC/s",
"~TEMP%", the call tree's (t) the same and "~OWN"; rows still come
(cache_fill, the demo's cache); the detail view of a row says its counters
are estimated and marks them "~", and every other estimate in it: the
temporary count and share, the kept rate of the leak score, the age
buckets, the peak, the graph's scale and the checkpoints.
"""
import re

import tuilib
from tuilib import check, frame


def test(t):
    t.start([t.memtop, "--sample", "64k", "--", t.demo, "60"], width=140, height=40)
    s = t.wait_for(lambda s: "Data sampled 1/64 KiB" in s, "'Data sampled 1/64 KiB'")
    check("Data exact" not in s, "sampled data called exact:\n" + frame(s))
    s = t.wait_rows(lambda rows, s: tuilib.row_for(rows, "cache_fill"), "a cache_fill row")
    s = t.screen()
    for want in (r"Heap ~[\d.]+ \S+ in ~\d+ blocks", r"peak ~[\d.]+", r"Growth \S+ ~[-+0]"):
        check(re.search(want, s), "no %r in the header:\n%s" % (want, frame(s)))
    heading = tuilib.find_heading(s.split("\n"))
    check(heading is not None, "no table heading:\n" + frame(s))
    line = s.split("\n")[heading]
    for col in ("~LIVE", "~BLOCKS", "~GROWTH/s", "~ALLOC/s", "~TEMP%"):
        check(col in line, "heading lacks %r: %r" % (col, line))
    t.keys("t")
    s = t.wait_for(lambda s: "CALL TREE" in s, "the call tree (t)")
    line = next(ln for ln in s.split("\n") if "CALL TREE" in ln)
    for col in ("~LIVE", "~OWN", "~BLOCKS", "~GROWTH/s", "~ALLOC/s", "~TEMP%"):
        check(col in line, "the call tree's heading lacks %r: %r" % (col, line))
    t.keys("t")
    t.wait_for(lambda s: "CALL TREE" not in s and tuilib.find_heading(s.split("\n")) is not None,
               "the table again (t)")
    t.keys("/")
    t.keys_literal("cache_fill")
    t.keys("Enter")
    t.wait_rows(lambda rows, s: len(rows) == 1 and "cache_fill" in rows[0].location,
                "the table narrowed to cache_fill")
    t.keys("Enter")
    s = t.wait_for(lambda s: "Counters" in s and "Backtrace" in s, "the detail view")
    check("Counters (~: estimated from samples)" in s and re.search(r"live +~[\d.]+ \S+ in ~\d+", s),
          "the detail view does not mark its counters:\n" + frame(s))
    # every estimated figure in it: the counters, the kept rate, the ages,
    # the graph's scale and the checkpoints ("earlier: 14s ago ~1.0 MiB")
    s = t.wait_for(lambda s: re.search(r"earlier: .*ago", s) and "samples)" in s and
                   not re.search(r"\(\d samples\)", s), "checkpoints and a graph", timeout=30)
    for want in (r"freed +~\S+ frees, ~\S+ temporary \(~\d+%", r"magnitude \S+ \(~[^)]* kept\)",
                 r"peak live +~\S+", r"earlier:( \S+ ago ~[\d.]+ \S+,)+ now ~[\d.]+ \S+"):
        check(re.search(want, s), "the detail view lacks %r:\n%s" % (want, frame(s)))
    lines = s.split("\n")
    at = next(i for i, ln in enumerate(lines) if "Live bytes since memtop attached" in ln)
    check(re.match(r" ~[\d.]+ \S+ ", lines[at + 1]),
          "the graph's scale lacks ~: %r" % lines[at + 1])
    ages = [ln for ln in lines if re.match(r"\s+(<|>=)\d+[smhd] ", ln)]
    check(ages and all(re.match(r"\s+\S+ +~[\d.]+ \S+", ln) for ln in ages),
          "an age bucket lacks ~: %r" % ages)
    t.keys("q")
    check(t.wait_dead() == 0, "memtop did not exit 0 after q")


tuilib.main(test, __doc__)
