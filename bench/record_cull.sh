#!/bin/sh
# record_cull.sh -- culled recordings against full ones (issue 19,
# docs/performance.md).  Interleaved, ROUNDS times: memtop-service-bench
# (20,000 allocations/s, 99 % freed within 50 ms) for SECS seconds recorded
# full and culled (MEMTOP_RECORD_MODE=culled, default 10 s threshold), then
# memtop-alloc-bench recorded full and culled.  Per run: file bytes,
# bytes/s, events written; and whether the replayed end state per call
# site (dat_dump --traces) of the culled file equals the full file's
# (MEMTOP_TEMP_MS=0: "temporary" then depends on the order of calls only,
# not on timing, so two runs count the same temporaries).
#
# Usage: bench/record_cull.sh [-b BUILD] [-s SECS] [-r ROUNDS] [-n STEPS] [-d DIR]
set -eu
build=build secs=30 rounds=2 steps=2000000 dir=""
while [ $# -gt 0 ]; do
    case $1 in
    -b) build=$2; shift 2 ;;
    -s) secs=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -n) steps=$2; shift 2 ;;
    -d) dir=$2; shift 2 ;;
    *) echo "usage: $0 [-b BUILD] [-s SECS] [-r ROUNDS] [-n STEPS] [-d DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$dir" ] || dir=$(mktemp -d /tmp/memtop-cull.XXXXXX)
mkdir -p "$dir"
lib=$build/lib/libmemtop.so dump=$build/bin/dat_dump
svc=$build/bin/memtop-service-bench alloc=$build/bin/memtop-alloc-bench

# The end state per call site (module, offset of the innermost frame): sorted lines.
sites() {
    "$dump" --traces "$1" | awk '$1 == "trace" && $4 != "-" {
        k = $4 " " $5; for (i = 7; i <= 12; i++) s[k, i] += $i; keys[k] = 1 }
        END { for (k in keys) { l = k; for (i = 7; i <= 12; i++) l = l " " s[k, i]; print l } }' |
        sort
}

# run NAME MODE PROG ARGS...: records PROG, prints a result line
# (MEMTOP_CULL_SECS from the environment, default 10).
run() {
    name=$1 mode=$2; shift 2
    rec=$dir/$name.dat
    rm -f "$rec"
    start=$(date +%s.%N)
    MEMTOP_SHM_DIR=$dir MEMTOP_RECORD=$rec MEMTOP_RECORD_MODE=$mode MEMTOP_TEMP_MS=0 \
        LD_PRELOAD=$lib "$@" >/dev/null
    end=$(date +%s.%N)
    info=$("$dump" "$rec")
    ev=$(echo "$info" | awk '$1 == "allocs" {a = $2} $1 == "frees" {f = $2} END {print a + f}')
    culled=$(echo "$info" | awk '$1 == "culled_blocks" {print $2}')
    early=$(echo "$info" | awk '$1 == "written_early" {print $2}')
    dropped=$(echo "$info" | awk '$1 == "end_dropped" {print $2}')
    size=$(stat -c %s "$rec")
    awk -v n="$name" -v s="$size" -v a="$start" -v b="$end" -v e="$ev" -v c="$culled" \
        -v w="$early" -v d="$dropped" 'BEGIN {
        printf "%-14s %12d %9.1f %10.1f %10d %10d %8d %8d\n", n, s, b - a, s / (b - a) / 1000, e, c, w, d }'
}

same() {
    if [ "$(sites "$dir/$1.dat")" = "$(sites "$dir/$2.dat")" ]; then
        echo "end state per site: $2 == $1 (to the byte)"
    else
        echo "end state per site: $2 DIFFERS from $1"
    fi
}

echo "secs=$secs rounds=$rounds steps=$steps load_before=$(cut -d' ' -f1 /proc/loadavg) dir=$dir"
printf '%-14s %12s %9s %10s %10s %10s %8s %8s\n' run file_bytes wall_s KB_per_s events culled early dropped
for r in $(seq 1 "$rounds"); do
    run svc_full$r full "$svc" "$secs"
    run svc_culled$r culled "$svc" "$secs"
    same svc_full$r svc_culled$r
    run alloc_full$r full "$alloc" -n "$steps"
    run alloc_culled$r culled "$alloc" -n "$steps"
    same alloc_full$r alloc_culled$r
    # The alloc bench runs about a second: with 10 s every block dies young.
    # A 50 ms threshold keeps its working set (65536 blocks per thread).
    MEMTOP_CULL_SECS=0.05 run alloc_c50ms$r culled "$alloc" -n "$steps"
    same alloc_full$r alloc_c50ms$r
done
echo "load_after=$(cut -d' ' -f1 /proc/loadavg)"
