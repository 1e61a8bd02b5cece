#!/usr/bin/env bash
# bench/hotpath.sh -- where libmemtop's hot path spends its instructions.
# Runs memtop-alloc-bench (1 thread) under valgrind's callgrind, counting only
# the timed loop (bench_worker_run), plain and under libmemtop with
# MEMTOP_DISABLE=1 (interposition only), MEMTOP_DEPTH=1 (one frame) and the
# default depth, and prints instructions per step for each, then the top
# functions of the default run; and sampled (MEMTOP_SAMPLE, default 512k; SAMPLE=N
# to change); BENCH=memtop-alloc-bench-jemalloc (or -tcmalloc) runs the same
# benchmark linked with that allocator; CACHE=1 adds simulated cache misses
# per step (below).  Instruction counts are exact and do not
# depend on the machine's load, unlike times; they do not show cache misses.
# Needs valgrind.  Takes about a minute.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$repo/build}
ops=${OPS:-100000}
bench="$build/bin/${BENCH:-memtop-alloc-bench}" # BENCH=memtop-alloc-bench-jemalloc...
lib="$build/lib/libmemtop.so"
for f in "$bench" "$lib"; do
    [ -e "$f" ] || { echo "hotpath.sh: $f not built" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "hotpath.sh: valgrind not installed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtop-hotpath.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export MEMTOP_SHM_DIR="$tmp"

# callgrind NAME ENV... : instructions of the timed loop, per step
callgrind() {
    local name=$1
    shift
    env "$@" valgrind --tool=callgrind --toggle-collect=bench_worker_run \
        --callgrind-out-file="$tmp/$name.out" "$bench" -n "$ops" >/dev/null 2>"$tmp/$name.err" ||
        { echo "hotpath.sh: $name failed:" >&2; tail -3 "$tmp/$name.err" >&2; exit 1; }
    sed -n 's/^summary: *//p' "$tmp/$name.out"
}

plain=$(callgrind plain)
printf "%-18s %8s %10s\n" run "instr/op" "added/op"
printf "%-18s %8d %10s\n" plain $((plain / ops)) -
for run in disabled:MEMTOP_DISABLE=1 depth1:MEMTOP_DEPTH=1 default:MEMTOP_LOG=warn \
    sampled:MEMTOP_SAMPLE=${SAMPLE:-512k}; do
    n=$(callgrind "${run%%:*}" "${run#*:}" LD_PRELOAD="$lib")
    printf "%-18s %8d %10d\n" "memtop-${run%%:*}" $((n / ops)) $(((n - plain) / ops))
done
echo
echo "top functions, default depth (self instructions per step):"
callgrind_annotate --inclusive=no "$tmp/default.out" 2>/dev/null |
    awk -v ops="$ops" '/^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ {
        n = $1; gsub(",", "", n); sub(/^ *[0-9,]+ +\([^)]*\) +/, "")
        if (++k <= 15) printf "%8.0f  %s\n", n / ops, $0 }'

# Cache misses (CACHE=1): callgrind's cache simulation with its last level
# set to one core's L2 (from sysfs, else 1 MiB 8-way), so that an "LL" miss
# is one that goes to L3 or memory, the kind the block table's lookups
# cost.  Per step for plain, the default and the sampled runs, then the functions with the
# most of them.  Simulated, so independent of the load like the instruction
# counts (hardware prefetches and software prefetch instructions are not
# modelled: a prefetched line still counts as a miss where it is used).
if [ "${CACHE:-0}" = 1 ]; then
    l2=/sys/devices/system/cpu/cpu0/cache/index2
    size=$(sed 's/K$//' "$l2/size" 2>/dev/null || echo 1024)
    ways=$(cat "$l2/ways_of_associativity" 2>/dev/null || echo 8)
    cachegrind() { # NAME ENV...: prints D1 and LL read misses per step
        local name=$1
        shift
        env "$@" valgrind --tool=callgrind --cache-sim=yes --LL=$((size * 1024)),"$ways",64 \
            --toggle-collect=bench_worker_run --callgrind-out-file="$tmp/c-$name.out" \
            "$bench" -n "$ops" >/dev/null 2>"$tmp/c-$name.err" ||
            { echo "hotpath.sh: $name (cache) failed:" >&2; tail -3 "$tmp/c-$name.err" >&2; exit 1; }
        awk -v n="$name" -v ops="$ops" '/^summary/ {
            printf "%-18s %9.2f %9.2f\n", n, $6 / ops, $9 / ops }' "$tmp/c-$name.out"
    }
    echo
    echo "cache misses per step (simulated; LL = one core's L2, ${size} KiB ${ways}-way):"
    printf "%-18s %9s %9s\n" run D1_read LL_read
    cachegrind plain
    cachegrind memtop-default MEMTOP_LOG=warn LD_PRELOAD="$lib"
    cachegrind memtop-sampled MEMTOP_LOG=warn LD_PRELOAD="$lib" MEMTOP_SAMPLE="${SAMPLE:-512k}"
    echo "top functions by LL read misses, default depth (per step):"
    callgrind_annotate --inclusive=no --show=DLmr --sort=DLmr "$tmp/c-memtop-default.out" 2>/dev/null |
        awk -v ops="$ops" '/^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ {
            n = $1; gsub(",", "", n); sub(/^ *[0-9,]+ +\([^)]*\) +/, "")
            if (++k <= 10) printf "%8.2f  %s\n", n / ops, $0 }'
fi

# Time shares by module, if perf can sample (software clock; no hardware
# counters needed).  Unlike instructions these include cache misses.
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$tmp/probe.data" true 2>/dev/null; then
    echo
    echo "time by module, default depth (perf, cpu-clock samples):"
    if LD_PRELOAD="$lib" perf record -q -F 2000 -e cpu-clock -o "$tmp/perf.data" \
        "$bench" -n $((ops * 10)) >/dev/null 2>"$tmp/perf.err"; then
        perf report -i "$tmp/perf.data" --stdio --sort dso 2>&1 | grep -v -e '^#' -e '^$' | head -8 || true
    else
        echo "perf record failed:"
        tail -3 "$tmp/perf.err"
    fi
fi
