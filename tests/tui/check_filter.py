"""check_filter.py -- `/` filters rows by name; Esc clears the filter.

Asserts: `/` then typing "cache" narrows the table, as you type, to rows
whose location matches (cache_fill only); Enter keeps the filter, and it still
holds after more data refreshes; Esc brings every row back.  A filter that
matches nothing says so ("no rows match"); Esc in the search line drops it.
A character beyond ASCII is kept as typed, and Backspace takes it off whole.
"""
import re

import tuilib
from tuilib import check


def only(name):
    def ok(rows, s):
        return bool(rows) and all(name in r.location for r in rows)
    return ok


def all_back(rows, s):
    return all(tuilib.row_for(rows, f) for f in ("session_log_append", "cache_fill",
                                                  "handle_request"))


def uptime(s):
    m = re.search(r" up (\S+) ", s)
    return m.group(1) if m else None


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    t.keys("/")
    t.keys_literal("cache")
    t.wait_rows(only("cache_fill"), "only cache_fill rows while typing /cache")
    t.keys("Enter")
    rows, s = t.wait_rows(only("cache_fill"), "only cache_fill rows after Enter")
    up = uptime(s)
    t.wait_for(lambda s: uptime(s) not in (None, up), "a data refresh (uptime changes)")
    t.wait_rows(only("cache_fill"), "the filter to hold after a refresh", timeout=5)
    t.keys("Escape")
    t.wait_rows(all_back, "every row back after Esc")

    t.keys("/")
    t.keys_literal("zzz_no_such_name")
    s = t.wait_for("no rows match", "'no rows match' for a filter matching nothing")
    _, rows = tuilib.parse_table(s)
    check(not rows, "rows shown for a filter matching nothing: %r" % rows)
    t.keys("Escape")
    t.wait_rows(all_back, "every row back after Esc in the search line")

    # A name with characters beyond ASCII (C++ and Rust allow them): the
    # filter line shows them as typed, and Backspace takes a whole one off.
    t.keys("/")
    t.keys_literal("cacé")
    t.wait_for("Filter: cacé", "'Filter: cacé' as typed (UTF-8 bytes kept)")
    t.keys("BSpace")
    t.wait_for(lambda s: "Filter: cac" in s and "Filter: cacé" not in s and "Filter: cac?" not in s,
               "Backspace taking off the whole 'é'")
    t.wait_rows(only("cache_fill"), "only cache_fill rows for /cac")
    t.keys("Escape")
    t.wait_rows(all_back, "every row back after Esc")


tuilib.main(test, __doc__)
