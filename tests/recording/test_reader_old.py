"""test_reader_old.py -- recordings of format versions 2 and 3 read as before.

Each data/NAME.dat was written by a version-2/3 writer (commit 3037bf7, the
last one before version 4's NEXT_TRACE), and data/NAME.batch.txt and
data/NAME.export.sha256 hold what that commit's `memtop -f NAME.dat
--batch --no-symbols` printed and the sha256 of what its `--no-symbols
--export` wrote: this memtop must print and write the same, to the byte.
  v2_bench   memtop-alloc-bench -t 2 -n 1500 --slots 300 (references, SAME_SIZE)
  v2_demo    memtop-demo 3 (several frames, frees written in full, level 19)
  v3_culled  memtop-demo 3, MEMTOP_RECORD_MODE=culled MEMTOP_CULL_SECS=1
When the viewer's output changes on purpose, regenerate the expected files
with that commit's build and this one's (the same outputs) -- never from the
reader under test alone.  The export sha256s were regenerated once so (branch
lostcause): main's build and this one's exports differed only in the JSON's
new recording.dropped_by_cause (all 0: nothing was dropped); tick order
(format version 5) added recording.order ("thread" for these files), and
nothing else; branch mallinfo added totals.allocator_age_ms (0, or 1 ms when
the file's last TOTALS came 1 ms before its end), and nothing else.  The
batch.txt of v2_demo and v3_culled were edited once (branch leftovers): the
growth window below 10 s is given to a tenth ("the last 1.1 s", before "the
last 1 s"), and v3_culled's duration line counts the culled blocks'
allocations and frees (6286 allocations, as its snapshot's totals, of which
286 written; before: 286); this build's output and the old files differed in
those lines only (diff).  The rate line of all three was edited once
(branch rates15): it says its window ("... frees/s over the last 1.0 s"),
and differed in that only (diff).  The batch.txt of all three were
regenerated once (branch leakcol): --batch gained a LEAK column before
LOCATION; with that column taken out, this build's output is the old
files' to the byte.  And once more (branch segmem): the heap line's
"memtop" figure says "+ segment unknown" (a recording does not store what
the segment held) and the export gained totals.segment_bytes (null); with
those taken out, this build's output is the old files' to the byte.  And
the rate line's allocation volume lost its '+' ("(651.9 KiB/s)": a
volume, not growth).  And once more (branch samerow): rows that share a
LOCATION name the callers that tell them apart (v2_bench's recursion:
"memtop-alloc-bench+0x35ae <- ...+0x2ba0 <- ... <- ...+0x2d68") and every
JSON trace gained "location_callers"; with the " <- ..." suffixes and
location_callers taken out, this build's outputs are the old ones to the
byte (sed, sha256).  And the export's recording object gained "stopped"
(null: no stop around the cursor, branch replay18); with it taken out,
this build's export is the old sha256's to the byte; and totals.rss_age_ms
(0, or 1 ms for v3_culled: how old the newest TOTALS is at the end), with it
taken out, the same.  Usage: test_reader_old.py MEMTOP DAT_DUMP DATA_DIR WORKDIR"""
import hashlib
import os
import shutil
import subprocess

from reader_checks import check, finish, setup

memtop, dump, data, work = setup()
for name, version in (("v2_bench", 2), ("v2_demo", 2), ("v3_culled", 3)):
    rec = name + ".dat"
    shutil.copy(os.path.join(data, rec), work)  # the output names the file as given
    check(open(os.path.join(work, rec), "rb").read(12)[8:12] == bytes([version, 0, 0, 0]),
          "%s says version %d" % (rec, version))
    p = subprocess.run([memtop, "-f", rec, "--batch", "--no-symbols"], cwd=work,
                       capture_output=True, timeout=120)
    want = open(os.path.join(data, name + ".batch.txt"), "rb").read()
    check(p.returncode == 0 and p.stdout == want,
          "%s: --batch prints what version 3's reader printed (%s)" % (rec, p.stderr.strip()))
    out = os.path.join(work, name + ".json")
    p = subprocess.run([memtop, "-f", rec, "--no-symbols", "--export", out], cwd=work,
                       capture_output=True, timeout=120)
    got = hashlib.sha256(open(out, "rb").read()).hexdigest() if p.returncode == 0 else ""
    want = open(os.path.join(data, name + ".export.sha256")).read().strip()
    check(got == want, "%s: --export writes what version 3's reader wrote" % rec)
    p = subprocess.run([dump, os.path.join(work, rec)], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0 and ("version %d" % version) in p.stdout, "%s: dat_dump reads it" % rec)
finish()
