#!/usr/bin/env python3
"""Real program: sqlite3 creates a table, inserts 100k rows, indexes,
queries, updates, deletes and vacuums (in memory); same output and exit
code under libmemtop.so, and tracked.  A failing script (-bail) keeps its
exit code 1 too."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import Test, check_tracked, need, script  # noqa: E402

(sqlite3,) = need("sqlite3")
t = Test("sqlite3")
sql = open(script("queries.sql")).read()
snap = t.run_all([sqlite3, "-batch", ":memory:"], 0, input=sql, timeout=120)
check_tracked(t, snap, "sqlite3", min_allocs=1000)
bad = "CREATE TABLE a(x);\nINSERT INTO a VALUES (1);\nSELECT * FROM nosuch;\nSELECT 2;\n"
t.run_all([sqlite3, "-bail", "-batch", ":memory:"], 1, input=bad)
t.finish()
