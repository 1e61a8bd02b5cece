"""test_reader_v1.py -- recordings of format version 1 still read.

data/v1_exact.dat was written by the version-1 writer (commit 27a1774:
memtop-exact recorded from its start, MEMTOP_TEMP_MS=0) and
data/v1_exact.expect.json holds the live export's counters at its exit.
`memtop -f` must export exactly those counters for every trace and in the
totals, say nothing about differences from the FINAL state, and the debug
decoder must replay it to its FINAL state.  Usage:
test_reader_v1.py MEMTOP DAT_DUMP DATA_DIR WORKDIR"""
import json
import os
import re
import subprocess

from reader_checks import check, finish, setup

memtop, dump, data, work = setup()
rec = os.path.join(data, "v1_exact.dat")
want = json.load(open(os.path.join(data, "v1_exact.expect.json")))
check(open(rec, "rb").read(12)[8:12] == b"\x01\x00\x00\x00", "the file says version 1")
out = os.path.join(work, "end.json")
p = subprocess.run([memtop, "-f", rec, "--no-symbols", "--export", out], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 0, "memtop -f reads it (%s)" % p.stderr.strip())
check("differ" not in p.stderr and "inexact" not in p.stderr, "no warning: %s" % p.stderr.strip())
if p.returncode == 0:
    got = json.load(open(out))
    fields = want["fields"]
    check([got["totals"][f] for f in fields] == want["totals"], "the totals equal the live export")
    traces = {str(t["id"]): [t[f] for f in fields] for t in got["traces"]}
    diff = [(k, v, traces.get(k)) for k, v in want["traces"].items() if traces.get(k) != v]
    check(not diff and len(traces) >= len(want["traces"]),
          "every trace's counters equal the live export (%d traces) %s" % (len(want["traces"]),
                                                                          diff[:3]))
p = subprocess.run([dump, "--traces", rec], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "version 1" in p.stdout, "dat_dump reads it")
rows = [l for l in p.stdout.splitlines() if l.startswith("trace ")]
bad = [l for l in rows
       if re.search(r"replay ((?:\d+ ?){6}) final", l).group(1).strip()
       != l.split(" final ")[1].split(" events ")[0].strip()]
check(rows and not bad, "replayed counters == FINAL state for every trace %s" % bad[:2])
finish()
