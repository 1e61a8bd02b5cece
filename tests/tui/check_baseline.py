"""check_baseline.py -- `b` marks a baseline: figures show changes since it.

Waits until the leaker holds 50+ live blocks (5 s of leaking at 10 blocks/s).
Asserts: after `b` the LIVE and BLOCKS headings become ΔLIVE and ΔBLOCKS (UTF-8
locale); within a few refreshes the leaker's ΔLIVE and ΔBLOCKS read "+...",
and ΔBLOCKS is below the blocks it held at the mark (a change, not the
total); the cache's row reads "0 B" or is left out (it did not change); the
header mentions the baseline.  `b` again: headings are LIVE/BLOCKS again, the
figures are totals (no "+", cache_fill back at its full size, the leaker's
LIVE above its delta) and the header no longer mentions a baseline.
"""
import tuilib
from tuilib import check, frame, parse_bytes, parse_count, row_for

LEAKER = "session_log_append"


def heading(s):
    return tuilib.parse_table(s)[0] or ""


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    rows, s = t.wait_rows(lambda rows, s: parse_count(row_for(rows, LEAKER).cells["BLOCKS"]) >= 50,
                          "session_log_append to hold 50 live blocks")
    check("\u0394" not in heading(s), "a delta heading before any baseline: %r" % heading(s))
    cache_total = parse_bytes(row_for(rows, "cache_fill").cells["LIVE"])

    t.keys("b")
    # The blocks at the mark are at least those of the last screen before it.
    blocks_at_mark = parse_count(row_for(rows, LEAKER).cells["BLOCKS"])

    def deltas(rows, s):
        leak = row_for(rows, LEAKER)
        return ("\u0394LIVE" in heading(s) and "\u0394BLOCKS" in heading(s) and
                leak is not None and leak.cells["LIVE"].startswith("+") and
                leak.cells["BLOCKS"].startswith("+"))
    rows, s = t.wait_rows(deltas, "ΔLIVE/ΔBLOCKS headings and a '+...' ΔLIVE for "
                          "session_log_append after b", timeout=10)
    leak = row_for(rows, LEAKER)
    check(parse_count(leak.cells["BLOCKS"]) < blocks_at_mark,
          "ΔBLOCKS %s right after the mark is not below the %d blocks held at the mark: "
          "totals, not changes?\n%s" % (leak.cells["BLOCKS"], blocks_at_mark, frame(s)))
    cache = row_for(rows, "cache_fill")
    # A trace with no allocation or free since the mark may be left out.
    check(cache is None or cache.cells["LIVE"] == "0 B",
          "cache_fill did not change since the baseline, yet its row is %r" %
          (cache.text if cache else None))
    check("Baseline" in s, "the header does not mention the baseline:\n" + frame(s))
    leak_delta = parse_bytes(leak.cells["LIVE"])
    # A trace that did not change since the mark is hidden, not missing: a
    # filter that finds no row says so (before: "no rows match" alone, while
    # cache_fill existed)
    t.keys("/")
    t.keys_literal("zzz_no_such_name")
    s = t.wait_for("no rows match", "'no rows match' for a filter matching nothing")
    check("changed since the baseline" in s,
          "the empty filter's line does not say rows are those changed since the baseline:\n" +
          frame(s))
    t.keys("Escape")
    t.wait_rows(lambda rows, s: row_for(rows, LEAKER) is not None, "the rows back after Esc")

    t.keys("b")

    def totals(rows, s):
        leak = row_for(rows, LEAKER)
        cache = row_for(rows, "cache_fill")
        return (heading(s) and "\u0394" not in heading(s) and leak is not None and
                cache is not None and not leak.cells["LIVE"].startswith("+") and
                parse_bytes(cache.cells["LIVE"]) == cache_total)
    rows, s = t.wait_rows(totals, "LIVE headings and totals again after the second b",
                          timeout=10)
    leak_total = parse_bytes(row_for(rows, LEAKER).cells["LIVE"])
    check(leak_total > leak_delta,
          "after clearing the baseline the leaker's LIVE %s is not above its delta %s" %
          (leak_total, leak_delta))
    check("Baseline" not in s, "the header still mentions a baseline:\n" + frame(s))


tuilib.main(test, __doc__)
