#!/usr/bin/env python3
"""A recording that starts with a burst: the frame that the definitions of
its traces fill (the second; the first is the small frame of the process
record) began at the strong small-frame level and reached
MT_RECW_SMALL_FRAME before zstd got any of it, so it is compressed at the
fast level (record_zstd.c mt_recw_emit; issue 12: level 19 on it cost ~80 M
instructions per recording).  The first frame stays at the strong level."""
import argparse
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preload", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--level", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    dat = os.path.join(a.workdir, "burst.dat")
    if os.path.exists(dat):
        os.unlink(dat)
    env = dict(os.environ, MEMTOP_RECORD=dat, LD_PRELOAD=a.preload)
    subprocess.run([a.bench, "-t", "1", "-n", "100000"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    seen = []
    for index in (0, 1):
        out = subprocess.run([a.level, dat, str(index)], check=True, capture_output=True,
                             text=True).stdout.split()
        seen.append((int(out[0]), out[1]))
    print("frames 0 and 1 (content bytes, level):", seen)
    ok = seen[0][1] in ("strong", "both") and seen[1][0] >= 24 << 10 and seen[1][1] == "fast"
    os.unlink(dat)
    if not ok:
        print("FAIL: the definitions' frame should be at least 24 KiB and fast, the first strong")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
