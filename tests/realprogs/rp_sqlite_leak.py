#!/usr/bin/env python3
"""Real program: Debian's sqlite3 CLI (libsqlite3.so.0) under libmemtop.so,
growing an in-memory table with a large page cache (4000 rows a round)
while churning (a temp table filled and emptied, sorts of random samples).
`memtop -p PID --batch -s leak` must rank the page-cache growth site first,
and its LOCATION must not be one of SQLite's malloc wrappers (issue 14).

What Debian's binary allows: libsqlite3.so.0 is stripped to its dynamic
symbols (the dbgsym package is not reachable here), so SQLite's own
functions show as `libsqlite3.so.0+0x...` except those it exports, like
sqlite3Malloc.  A trace of the growth reads, innermost first: an unnamed
frame that calls malloc (sqlite3MemMalloc), sqlite3Malloc, unnamed
wrappers (the page cache's allocators), ..., sqlite3BtreeInsert.  The name
rule takes sqlite3Malloc; the shape rule (src/tui/model/wrapper_shape.h)
the unnamed frame under it and the unnamed wrappers over it.  So the test
asserts that the location is past sqlite3Malloc in the trace (never the
frame that calls malloc) and that no function named like an allocator is
shown; it cannot name the SQLite function, which has no symbol.  Every
wait is bounded; the CLI is ended by the test."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import leak_run, leak_workdir, location_frame, need  # noqa: E402

ROUNDS = 30           # growth rounds; the report is taken after HALF
HALF = 20
ROWS = 4000           # per round, about 100 bytes each
WRAPPER = re.compile(r"alloc", re.I)


def fail(msg):
    print("FAIL rp_sqlite_leak.py: " + msg)
    sys.exit(1)


def workload(work):
    """The SQL script: growth rounds with churn, a marker file after HALF
    rounds, then a bounded wait for the stop file."""
    grow = ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<%d) "
            "INSERT INTO t(v) SELECT printf('%%.*c-%%d', 90, 'v', i) FROM c;" % ROWS)
    churn = ("SELECT count(*), max(length(v)) FROM (SELECT v FROM t ORDER BY random() LIMIT 200);\n"
             "INSERT INTO scratch SELECT randomblob(500) FROM t LIMIT 100; DELETE FROM scratch;")
    lines = [".output /dev/null", "PRAGMA cache_size=-400000;",
             "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);", "CREATE TEMP TABLE scratch(x);"]
    for r in range(ROUNDS):
        lines += ["BEGIN;", grow, "COMMIT;"] + [churn] * 20 + [".shell sleep 0.2"]
        if r == HALF:
            lines.append(".shell touch '%s/half'" % work)
    lines.append(".shell for i in $(seq 600); do [ -e '%s/stop' ] && break; sleep 0.1; done" % work)
    return "\n".join(lines) + "\n"


def check(text, rows, traces):
    if not rows or not traces:
        fail("no rows in:\n" + text)
    top, tr = rows[0], traces[0]
    print(text)
    if tr["location"] != top["where"] or tr["live_count"] < top["blocks"]:
        fail("the export's first trace (a moment later) is not the report's first row: %r"
             % tr["location"])
    if tr["live_bytes"] < max(t["live_bytes"] for t in traces) or not top["growth"].startswith("+"):
        fail("the first row is not the growing page cache: %r" % top)
    if tr["live_count"] < 500:
        fail("the first row holds %d blocks, not the table's pages" % tr["live_count"])
    names = [f["function"] or "" for f in tr["frames"]]
    at = location_frame(tr)
    if at is None or "sqlite3Malloc" not in names[:at]:
        fail("the LOCATION %r is not past sqlite3Malloc in %r" % (top["where"], names))
    if WRAPPER.search(names[at]):
        fail("the LOCATION is an allocator: %r" % top["where"])
    print("ok: -s leak ranks %s first (%d blocks, %s), frame %d of its trace, past %s" %
          (top["where"], top["blocks"], top["growth"], at, names[:at]))


def main():
    (sqlite3,) = need("sqlite3")
    work, shm = leak_workdir("sqlite_leak")
    check(*leak_run([sqlite3, "-batch", ":memory:"], work, shm, workload(work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
