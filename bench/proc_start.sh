#!/usr/bin/env bash
# bench/proc_start.sh -- what does the preload add to the start and exit of a
# short process?  Runs memtop-proc-start (a bash loop of PROG, fork+exec and
# posix_spawn of PROG from a threaded parent) plain and with libmemtop.so
# preloaded into parent and children, interleaved K times, and prints the
# median milliseconds per process of each and what the preload adds.
# See bench/README.md and docs/performance.md ("Process start and exit").
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/proc_start.sh [options]
  -b DIR        build directory (default: <repo>/build)
  -k N          repetitions, the median is reported (default 7)
  -n N          processes per run (default 100)
  -m "bash fork spawn"  the ways to start them (default all three)
  -p PROG       the short program (default /bin/true)
  --base LIB    also run with another libmemtop.so (e.g. main's build), column "base"
  --env VAR=V   an environment setting for the memtop runs (repeatable)
  -h            this help
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
reps=7
nproc_=100
modes="bash fork spawn"
prog=/bin/true
base=""
envs=()
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -k) reps=$2; shift 2 ;;
    -n) nproc_=$2; shift 2 ;;
    -m) modes=$2; shift 2 ;;
    -p) prog=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "proc_start.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

driver="$build/bin/memtop-proc-start"
lib="$build/lib/libmemtop.so"
for f in "$driver" "$lib" ${base:+"$base"}; do
    [ -e "$f" ] || { echo "proc_start.sh: $f not found (cmake --build $build)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtop-procstart.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Segments go to a private directory on tmpfs when there is one: a directory
# on disk makes creating a segment far slower than /dev/shm.
shm=$(mktemp -d /dev/shm/memtop-procstart.XXXXXX 2>/dev/null || { mkdir "$tmp/shm" && echo "$tmp/shm"; })
trap 'rm -rf "$tmp" "$shm"' EXIT
results="$tmp/results" # lines: tool mode ms_per_proc child_cpu_ms

tools=(plain)
[ -n "$base" ] && tools+=(base)
tools+=(memtop)

run_tool() { # tool mode -> the driver's result line
    local tool=$1 mode=$2 l=""
    local args=(-n "$nproc_" "$mode" "$prog")
    [ "$mode" = bash ] && args=(-t 0 -l 0 "${args[@]}")
    case "$tool" in
    plain) "$driver" "${args[@]}" ;;
    base) l=$base ;;
    memtop) l=$lib ;;
    esac
    [ -z "$l" ] || env ${envs[@]+"${envs[@]}"} MEMTOP_SHM_DIR="$shm" LD_PRELOAD="$l" \
        "$driver" "${args[@]}"
}

echo "machine: $(nproc) cpus, Linux $(uname -r); $nproc_ x $prog per run, median of $reps" \
    "interleaved runs${envs[*]+; memtop with ${envs[*]}}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= reps; r++)); do
    for mode in $modes; do
        for tool in "${tools[@]}"; do
            printf '\r[proc_start.sh] rep %d/%d %-6s %-7s' "$r" "$reps" "$mode" "$tool" >&2
            line=$(run_tool "$tool" "$mode" 2>>"$tmp/stderr") || line=""
            ms=$(sed -n 's/.* ms_per_proc=\([^ ]*\).*/\1/p' <<<"$line")
            cpu=$(sed -n 's/.* child_cpu_ms_per_proc=\([^ ]*\).*/\1/p' <<<"$line")
            echo "$tool $mode ${ms:-FAIL} ${cpu:-FAIL}" >>"$results"
        done
    done
done
printf '\r%60s\r' "" >&2
[ -s "$tmp/stderr" ] && { echo "stderr of the runs (first lines):"; head -5 "$tmp/stderr"; }
left=$(find "$shm" -mindepth 1 | wc -l)
[ "$left" = 0 ] || echo "note: $left segment(s) left behind in the private directory"

# A tool's "added" is the median over repetitions of (tool - plain of the
# same repetition): each pair ran back to back.
awk -v tools="${tools[*]}" -v modes="$modes" '
function median(list,   n, a, i, j, x) {
    n = split(list, a, " ")
    if (n == 0) return "FAIL"
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ r = ++nrep[$1, $2] }
$3 == "FAIL" { next }
{ ms[$1, $2] = ms[$1, $2] " " $3; cpu[$1, $2] = cpu[$1, $2] " " $4; v[$1, $2, r] = $3; c[$1, $2, r] = $4 }
END {
    nt = split(tools, T, " "); nm = split(modes, M, " ")
    printf "%-6s %-7s %10s %10s %12s %16s\n", "mode", "tool", "ms/proc", "added_ms", "cpu_ms/proc", "cpu_added_ms"
    for (m = 1; m <= nm; m++) for (t = 1; t <= nt; t++) {
        d = ""; dc = ""
        for (r = 1; r <= nrep[T[t], M[m]]; r++)
            if ((T[t], M[m], r) in v && ("plain", M[m], r) in v) {
                d = d " " v[T[t], M[m], r] - v["plain", M[m], r]
                dc = dc " " c[T[t], M[m], r] - c["plain", M[m], r]
            }
        printf "%-6s %-7s %10.3f %10s %12.3f %16s\n", M[m], T[t], median(ms[T[t], M[m]]),
            T[t] == "plain" ? "-" : sprintf("%.3f", median(d)), median(cpu[T[t], M[m]]),
            T[t] == "plain" ? "-" : sprintf("%.3f", median(dc))
    }
}' "$results"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
