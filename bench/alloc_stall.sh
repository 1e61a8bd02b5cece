#!/bin/sh
# alloc_stall.sh -- how long memtop's background work holds a program's
# allocations up: memtop-alloc-stall (one thread keeping a large heap,
# timing every free + malloc pair) plain and under each build's
# libmemtop.so, the runs interleaved round by round (the order reversed
# every other round), K rounds.  Prints per configuration the median over
# the rounds of the longest pair and of the pairs over 1 ms and 5 ms.
# A background thread that takes an allocator lock (glibc's mallinfo2 walks
# an arena under its lock) shows here, not in a per-call average.
#
# Usage: bench/alloc_stall.sh [-b BUILD] [-B OTHER_BUILD]... [-k ROUNDS]
#                             [-n BLOCKS] [-s SECONDS]
#   -b  the build whose memtop-alloc-stall runs (default build)
#   -B  another build whose libmemtop.so runs the same program (repeatable)
#   -k  rounds (default 5); -n live blocks (default 1000000); -s seconds
#       per run (default 10)
set -eu
build=build others="" rounds=5 blocks=1000000 secs=10
while [ $# -gt 0 ]; do
    case $1 in
    -b) build=$2; shift 2 ;;
    -B) others="$others $2"; shift 2 ;;
    -k) rounds=$2; shift 2 ;;
    -n) blocks=$2; shift 2 ;;
    -s) secs=$2; shift 2 ;;
    *) echo "usage: $0 [-b BUILD] [-B OTHER_BUILD]... [-k ROUNDS] [-n BLOCKS] [-s SECONDS]" >&2; exit 2 ;;
    esac
done
prog=$build/bin/memtop-alloc-stall
[ -x "$prog" ] || { echo "alloc_stall.sh: $prog not built" >&2; exit 2; }
tmp=$(mktemp -d /tmp/memtop-stall.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
configs="plain $build$others"

run() { # CONFIG: one run, its line appended to $tmp/results
    if [ "$1" = plain ]; then
        line=$("$prog" -n "$blocks" -s "$secs")
    else
        line=$(env MEMTOP_SHM_DIR="$tmp" LD_PRELOAD="$1/lib/libmemtop.so" "$prog" -n "$blocks" -s "$secs")
    fi
    echo "$1 $line" >>"$tmp/results"
}

r=0
while [ $r -lt "$rounds" ]; do
    order=$configs
    [ $((r % 2)) = 1 ] && order=$(echo "$configs" | tr ' ' '\n' | tac | tr '\n' ' ')
    for c in $order; do run "$c"; done
    r=$((r + 1))
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
printf '%-28s %12s %10s %10s %12s\n' config longest_us over_1ms over_5ms steps
for c in $configs; do
    lines=$(grep "^$c " "$tmp/results")
    printf '%-28s %12s %10s %10s %12s\n' "$c" \
        "$(echo "$lines" | field longest_us | median)" "$(echo "$lines" | field over_1ms | median)" \
        "$(echo "$lines" | field over_5ms | median)" "$(echo "$lines" | field steps | median)"
done
