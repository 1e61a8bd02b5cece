#!/bin/sh
# record_drops.sh -- does recording keep every event?  Records
# memtop-alloc-bench from the start (MEMTOP_RECORD) at several thread
# counts, optionally with CPU hogs beside it (busy loops, one per CPU, like
# `stress -c`), and prints per run: the events written and dropped (from the
# file, with dat_dump), the file's size, the wall time, the peak RSS, the
# load average (1 min) at the end of the run, the drops by cause
# (MEMTOP_LOG=info's line: disk behind / wait cap / could not wait / no
# buffer), the longest a hook waited at the buffer's bound, the longest
# write(2) to the file, the writer thread's time on a CPU and waiting
# for one (schedstat), and the bench's process CPU time for its timed loop
# (cpu_s).
#
# Usage: bench/record_drops.sh [-b BUILD] [-n STEPS] [-t "1 4 16"] [--hogs N] [-d DIR]
#   -n    steps per thread (default 2000000)
#   --hogs N  N busy loops run during every recording (default 0)
#   -d    where the recordings go (default a new directory under /tmp)
set -eu
build=build steps=2000000 threads="1 4 16" hogs=0 dir=""
while [ $# -gt 0 ]; do
    case $1 in
    -b) build=$2; shift 2 ;;
    -n) steps=$2; shift 2 ;;
    -t) threads=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    -d) dir=$2; shift 2 ;;
    *) echo "usage: $0 [-b BUILD] [-n STEPS] [-t THREADS] [--hogs N] [-d DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$dir" ] || dir=$(mktemp -d /tmp/memtop-drops.XXXXXX)
mkdir -p "$dir"
lib=$build/lib/libmemtop.so bench=$build/bin/memtop-alloc-bench dump=$build/bin/dat_dump
hog_pids=""
# The hogs end with the script, also when it is interrupted or killed by a
# signal (bash runs no EXIT trap then unless the signal is trapped too).
trap '[ -z "$hog_pids" ] || kill $hog_pids 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
for i in $(seq 1 "$hogs"); do
    sh -c 'while :; do :; done' &
    hog_pids="$hog_pids $!"
done
echo "steps=$steps hogs=$hogs load_before=$(cut -d' ' -f1 /proc/loadavg) dir=$dir"
printf '%-8s %12s %10s %10s %9s %10s %6s %-16s %10s %10s %-17s %s\n' threads written dropped file_MB \
    wall_s maxrss_MB load causes stall_ms write_ms writer_run/wait_s cpu_s
for t in $threads; do
    rec=$dir/t$t.dat
    rm -f "$rec"
    start=$(date +%s.%N)
    out=$(MEMTOP_LOG=info MEMTOP_SHM_DIR=$dir MEMTOP_RECORD=$rec LD_PRELOAD=$lib \
        "$bench" -t "$t" -n "$steps" 2>"$dir/log")
    end=$(date +%s.%N)
    load=$(cut -d' ' -f1 /proc/loadavg)
    why=$(sed -n 's/.*events dropped (disk behind \([0-9]*\), wait cap \([0-9]*\), could not wait \([0-9]*\), no buffer \([0-9]*\)).*/\1\/\2\/\3\/\4/p' "$dir/log")
    stall=$(sed -n 's/.*longest hook wait \([0-9.]*\) ms.*/\1/p' "$dir/log")
    wmax=$(sed -n 's/.*longest write \([0-9.]*\) ms.*/\1/p' "$dir/log")
    wrun=$(sed -n 's/.*writer thread ran \([0-9.]*\) s and waited \([0-9.]*\) s.*/\1\/\2/p' "$dir/log")
    rss=$(echo "$out" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p')
    cpu=$(echo "$out" | sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p')
    info=$("$dump" "$rec")
    written=$(echo "$info" | awk '$1 == "end_events" {print $2}')
    dropped=$(echo "$info" | awk '$1 == "end_dropped" {print $2}')
    size=$(stat -c %s "$rec")
    awk -v t="$t" -v w="$written" -v d="$dropped" -v s="$size" -v a="$start" -v b="$end" -v r="$rss" \
        -v l="$load" -v y="${why:--}" -v st="${stall:--}" -v wm="${wmax:--}" -v wr="${wrun:--}" \
        -v c="${cpu:--}" \
        'BEGIN { printf "%-8s %12s %10s %10.1f %9.1f %10.0f %6s %-16s %10s %10s %-17s %s\n", t, w, d, s / 1e6, b - a, r / 1024, l, y, st, wm, wr, c }'
    rm -f "$rec"
done
echo "load_after=$(cut -d' ' -f1 /proc/loadavg)"
