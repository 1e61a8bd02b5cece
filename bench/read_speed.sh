#!/bin/sh
# read_speed.sh -- how fast `memtop -f` reads a recording (issue 12's goal:
# at least 30 M events/s).  Records four files once -- big (alloc-bench, 1
# thread, 2 M steps), mt4 (4 threads, 500 k steps each), many (many-traces,
# 1,000 sites, 3 s at full speed) and samp (sampled at 4 KiB, 2 threads, 4 M
# steps) -- then times the first pass over each, `memtop -f F --batch
# --no-symbols` with MEMTOP_READ_STATS=1, on one and on two reading threads
# (MEMTOP_READ_THREADS; the default takes two only while the load leaves a
# CPU free), for each build given, the runs interleaved round by round so
# that the machine's noise falls on all of them alike (the builds' order
# reversed every other round: the one read first was seen to gain).  Prints per file,
# threads and build the median of the pass's wall time and the events per
# second by it, and the median ratio of each build to the first (paired by
# round).
#
# Usage: bench/read_speed.sh [-b BUILD] [-B OTHER_BUILD]... [-o] [-k ROUNDS] [-d DIR]
#   -b    the build whose libmemtop.so records and whose memtop reads first
#         (default build)
#   -B    another build whose memtop reads the same files (repeatable)
#   -o    each build records its own files and reads them (a change of the
#         format: an older memtop cannot read a newer file); the same
#         workloads, so the events per file are the first build's
#   -k    rounds (default 11)
#   -d    where the recordings are kept: reused if there (default a new
#         directory under /tmp)
set -eu
build=build others="" rounds=11 dir="" own=0
while [ $# -gt 0 ]; do
    case $1 in
    -b) build=$2; shift 2 ;;
    -B) others="$others $2"; shift 2 ;;
    -k) rounds=$2; shift 2 ;;
    -d) dir=$2; shift 2 ;;
    -o) own=1; shift ;;
    *) echo "usage: $0 [-b BUILD] [-B OTHER_BUILD]... [-o] [-k ROUNDS] [-d DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$dir" ] || dir=$(mktemp -d /tmp/memtop-read.XXXXXX)
mkdir -p "$dir"
bin=$build/bin
builds="$build$others"

# Where build B's memtop reads the files: the first build's, or with -o
# its own (in a directory named after its position).
files_of() {
    [ "$own" = 1 ] || { echo "$dir"; return; }
    i=0
    for x in $builds; do
        i=$((i + 1))
        [ "$x" = "$1" ] && { echo "$dir/b$i"; return; }
    done
}

record() { # DIR LIB NAME ENV... -- CMD...: records CMD into DIR/NAME.dat unless it is there
    out=$1 lib=$2 name=$3
    shift 3
    [ -s "$out/$name.dat" ] && return 0
    env MEMTOP_SHM_DIR="$dir" MEMTOP_RECORD="$out/$name.dat" LD_PRELOAD="$lib" "$@" >/dev/null
}
recorders=$build
[ "$own" = 1 ] && recorders=$builds
for b in $recorders; do
    out=$(files_of "$b")
    mkdir -p "$out"
    l=$b/lib/libmemtop.so
    record "$out" "$l" big "$bin/memtop-alloc-bench" -t 1 -n 2000000
    record "$out" "$l" mt4 "$bin/memtop-alloc-bench" -t 4 -n 500000
    record "$out" "$l" many "$bin/memtop-many-traces" -n 1000 --rate 0 --seconds 3
    record "$out" "$l" samp MEMTOP_SAMPLE=4096 "$bin/memtop-alloc-bench" -t 2 -n 4000000
done

# Events per file: allocations and frees, from the writer tests' decoder.
events() {
    "$bin/dat_dump" "$1" | awk '$1 == "allocs" || $1 == "ref_frees" || $1 == "prev_frees" || $1 == "full_frees" {
        n += $2 } END { print n }'
}
files="big mt4 many samp"
reversed=""
for b in $builds; do reversed="$b $reversed"; done
echo "rounds=$rounds dir=$dir builds: $builds load_before=$(cut -d' ' -f1 /proc/loadavg)"
runs=$dir/runs # lines: round file threads build wall_s
: >"$runs"
for r in $(seq 1 "$rounds"); do
    order=$builds
    [ $((r % 2)) = 0 ] && order=$reversed
    for f in $files; do
        for t in 1 2; do
            for b in $order; do
                wall=$(MEMTOP_READ_STATS=1 MEMTOP_READ_THREADS=$t "$b/bin/memtop" -f "$(files_of "$b")/$f.dat" \
                    --batch --no-symbols 2>&1 >/dev/null |
                    sed -n 's/.*read pass:.* wall \([0-9.]*\) s;.*/\1/p' | tail -1)
                echo "$r $f $t $b ${wall:-FAIL}" >>"$runs"
            done
        done
    done
done
echo "load_after=$(cut -d' ' -f1 /proc/loadavg)"
printf '%-5s %10s %7s %-28s %9s %10s %9s\n' file events threads build median_s M_ev/s vs_first
for f in $files; do
    n=$(events "$(files_of "$build")/$f.dat")
    for t in 1 2; do
        awk -v f="$f" -v t="$t" -v n="$n" -v first="$build" -v order="$builds" '
            function median(a, k,   i, j, x) { # sorts a[1..k] in place
                for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--)
                    a[j + 1] = a[j]; a[j + 1] = x }
                return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
            $2 == f && $3 == t && $5 != "FAIL" { w[$4, $1] = $5; rounds[$1] = 1 }
            END {
                nb = split(order, bs, " ")
                for (i = 1; i <= nb; i++) {
                    b = bs[i]; k = 0; kr = 0
                    for (r in rounds) {
                        kb = b SUBSEP r; kf = first SUBSEP r
                        if (kb in w) v[++k] = w[kb]
                        if ((kb in w) && (kf in w) && w[kf] > 0) q[++kr] = w[kb] / w[kf]
                    }
                    if (!k) { printf "%-5s %10d %7d %-28s %9s\n", f, n, t, b, "FAIL"; continue }
                    m = median(v, k)
                    rate = m > 0 ? n / m / 1e6 : 0 # (a ">" in printf would redirect)
                    printf "%-5s %10d %7d %-28s %9.3f %10.1f %9.3f\n", f, n, t, b, m, rate,
                        kr ? median(q, kr) : 0
                }
            }' "$runs"
    done
done
