"""check_leak_rank.py -- `L` ranks the steady leaker first.

On memtop-demo, cache_fill holds more live bytes (1 MiB, filled once) than
session_log_append (2 KiB per 100 ms tick, never freed) for the first ~50 s.
Asserts: by live bytes (the default, and `M`) cache_fill is the first row;
after `L` the first data row on screen is session_log_append, while its LIVE
is still smaller than cache_fill's (so the order is by suspicion, not size),
and its LEAK score is higher than cache_fill's and handle_request's.
"""
import tuilib
from tuilib import check


def first_row_is(name):
    def ok(rows, s):
        return bool(rows) and name in rows[0].location
    return ok


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    rows, s = t.wait_rows(first_row_is("cache_fill"),
                          "cache_fill (the largest) first in the default sort by live bytes")
    # Judge the ranking once the picture is the one the issue describes: the
    # leaker growing, the cache (which grew in the first interval) holding
    # still.  GROWTH/s is the rate over the last 30-36 s (since the start until
    # then), so the cache's own still reads its filling: wait until the cache's
    # rate has fallen below its first reading (a few snapshots after the fill).
    first = {}

    def settled(rows, s):
        leak = tuilib.row_for(rows, "session_log_append")
        cache = tuilib.row_for(rows, "cache_fill")
        if not (leak and cache and leak.cells["GROWTH/s"].startswith("+")):
            return False
        rate = cache.cells["GROWTH/s"]
        g = tuilib.parse_bytes(rate) if rate.startswith("+") else 0
        first.setdefault("g", g)
        return g * 4 < first["g"] or g == 0
    t.wait_rows(settled, "session_log_append growing and cache_fill holding still")
    t.wait_for(lambda s: "growth/s over the last" in s,
               "the status line stating the window of GROWTH/s")
    t.keys("L")
    rows, s = t.wait_rows(lambda rows, s: len(rows) >= 3 and
                          "session_log_append" in rows[0].location,
                          "session_log_append as the first data row after L (if it is not "
                          "on screen at all, the table hides rows above the selection)",
                          timeout=10)
    leak = rows[0]
    cache = tuilib.row_for(rows, "cache_fill")
    check(cache is not None, "cache_fill is not on screen after L:\n" + tuilib.frame(s))
    leak_live = tuilib.parse_bytes(leak.cells["LIVE"])
    cache_live = tuilib.parse_bytes(cache.cells["LIVE"])
    check(cache_live > leak_live,
          "the premise fails: cache_fill LIVE %s is not above session_log_append LIVE %s" %
          (cache.cells["LIVE"], leak.cells["LIVE"]))
    for other in rows[1:]:
        check(float(leak.cells["LEAK"]) > float(other.cells["LEAK"]),
              "session_log_append's LEAK %s is not above %r's %s" %
              (leak.cells["LEAK"], other.location, other.cells["LEAK"]))
    # Back to live bytes: `M` puts the cache on top again.
    t.keys("M")
    t.wait_rows(lambda rows, s: len(rows) >= 3 and "cache_fill" in rows[0].location,
                "cache_fill as the first data row after M", timeout=10)


tuilib.main(test, __doc__)
