"""test_reader_cut_large.py -- a large recording cut anywhere in its last
frames reads up to its last complete frame (issue 12).  memtop-alloc-bench
records 2,000,000 steps at 1 thread (about 13 MB, frames of up to 2^19
allocations); dat_cut_tail.c then cuts the file in its last 3 frames (the
last frame of events, the final state, END) at every byte near a zstd block
or frame boundary and of every small frame, and every 1021st byte elsewhere,
and checks that each cut opens, reads exactly its complete frames, and says
truncated (see dat_cut_tail.c).

Usage: test_reader_cut_large.py --preload LIB --bench BENCH --cut DAT_CUT_TAIL --workdir DIR"""
import argparse
import os
import shutil
import subprocess
import sys

p = argparse.ArgumentParser()
for name in ("preload", "bench", "cut", "workdir"):
    p.add_argument("--" + name, required=True)
a = p.parse_args()
shutil.rmtree(a.workdir, ignore_errors=True)
os.makedirs(a.workdir)
rec = os.path.join(a.workdir, "big.dat")
env = dict(os.environ, LD_PRELOAD=a.preload, MEMTOP_SHM_DIR=a.workdir, MEMTOP_RECORD=rec)
r = subprocess.run([a.bench, "-t", "1", "-n", "2000000"], env=env, capture_output=True, text=True,
                   timeout=600)
if r.returncode != 0 or not os.path.exists(rec):
    print("FAIL: the bench did not record: rc %d %s" % (r.returncode, r.stderr[-500:]))
    sys.exit(1)
print("recorded %d bytes" % os.path.getsize(rec))
r = subprocess.run([a.cut, rec, "3"], capture_output=True, text=True, timeout=1200)
print(r.stdout.strip())
if r.returncode != 0:
    print("FAIL: %s" % r.stderr.strip())
    sys.exit(1)
print("ok: every cut of the last 3 frames reads its complete frames, said truncated")
shutil.rmtree(a.workdir, ignore_errors=True)
