#!/usr/bin/env bash
# bench/viewer_cpu.sh -- how much CPU and memory does the viewer itself use?
# Issue 4: "memtop's own CPU use stays small.  Measure it with 100,000 live
# backtraces at a 1 s refresh."  Starts memtop-many-traces (N distinct live
# backtraces, light churn and a slow leak) under libmemtop.so with a private
# MEMTOP_SHM_DIR, waits until the segment holds >= N traces, then for each
# scenario runs a viewer against it, waits for the warm-up (names resolved),
# and measures over a window: the viewer's CPU (utime+stime from
# /proc/PID/stat, % of one core), its VmRSS/VmHWM, and the target's own CPU.
# Scenarios: the TUI in a detached tmux at 200x50 and 80x24, with the detail
# view of a 20-frame trace open (Down Down Enter), grouped by function (g), the
# call tree (t; "treeleak": t L, sorted by leak), `--batch --top 20` to
# /dev/null, and no viewer at all.  Then the target's slowdown: its churn
# rate flat out (--rate 0) with no viewer and with the TUI attached.
# Repeats K times and prints medians.  See docs/performance.md,
# "Viewer CPU (issue 4)".  Needs tmux.  ~5 min per repetition with -w 30.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/viewer_cpu.sh [options]
  -b DIR      build directory (default: <repo>/build)
  -n N        live backtraces (default 100000)
  -w SECS     measured window per scenario (default 60)
  -k N        repetitions, medians reported (default 3)
  -s "LIST"   scenarios (default: "none tui200 tui80 detail group batch"; also
              "tree" and "treeleak": the call tree view, t and t L)
  --no-slowdown   skip the target-slowdown measurement
  --slow-w SECS   window of each slowdown measurement (default 20)
  --keep DIR  keep the raw results and screen captures in DIR
  -h          this help
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
ntraces=100000
window=60
reps=3
scenarios="none tui200 tui80 detail group batch"
slowdown=1
slow_w=20
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -n) ntraces=$2; shift 2 ;;
    -w) window=$2; shift 2 ;;
    -k) reps=$2; shift 2 ;;
    -s) scenarios=$2; shift 2 ;;
    --no-slowdown) slowdown=0; shift ;;
    --slow-w) slow_w=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "viewer_cpu.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

work="$build/bin/memtop-many-traces"
memtop="$build/bin/memtop"
totals="$build/bin/memtop-bench-totals"
lib="$build/lib/libmemtop.so"
for f in "$work" "$memtop" "$totals" "$lib"; do
    [ -e "$f" ] || { echo "viewer_cpu.sh: $f not built (cmake --build $build)" >&2; exit 1; }
done
command -v tmux >/dev/null || { echo "viewer_cpu.sh: tmux not installed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtop-viewer.XXXXXX")
sock="memtop-viewer-$$" # private tmux server
target_pid=""
viewer_pid=""
cleanup() {
    tmux -L "$sock" kill-server 2>/dev/null || true
    [ -n "$viewer_pid" ] && kill "$viewer_pid" 2>/dev/null || true
    [ -n "$target_pid" ] && kill "$target_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    [ -n "$keep" ] && { mkdir -p "$keep" && cp -r "$tmp"/. "$keep"/; }
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/shm"
export MEMTOP_SHM_DIR="$tmp/shm"
results="$tmp/results" # scenario rep viewer_cpu% rss_kb hwm_kb target_cpu% warmup_s
: >"$results"
hz=$(getconf CLK_TCK)

cpu_ticks() { # utime+stime of a process (all its threads), in clock ticks
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
status_kb() { # status_kb PID FIELD
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}
log() { printf '[viewer_cpu] %s\n' "$*" >&2; }

# start_target ARGS... : starts the workload preloaded, waits until its
# segment holds >= ntraces traces; sets target_pid.
start_target() {
    LD_PRELOAD="$lib" "$work" -n "$ntraces" "$@" >"$tmp/target.out" 2>"$tmp/target.err" &
    target_pid=$!
    local t0=$SECONDS n=0
    while ((SECONDS - t0 < 120)); do
        if [ -f "$MEMTOP_SHM_DIR/memtop-$target_pid" ]; then
            n=$("$totals" "$MEMTOP_SHM_DIR/memtop-$target_pid" 2>/dev/null |
                sed -n 's/^trace_count=//p' || true)
            [ "${n:-0}" -ge "$ntraces" ] && return 0
        fi
        kill -0 "$target_pid" 2>/dev/null || break
        sleep 0.5
    done
    echo "viewer_cpu.sh: target never published $ntraces traces (last: ${n:-none})" >&2
    cat "$tmp/target.err" >&2
    exit 1
}
stop_target() {
    kill "$target_pid" 2>/dev/null || true
    wait "$target_pid" 2>/dev/null || true
    target_pid=""
}

# start_tui WxH KEYS : memtop -p in a detached tmux session; sets viewer_pid
# (the pane's process is memtop itself: tmux runs the command by exec).
start_tui() {
    local size=$1 keys=$2
    tmux -L "$sock" new-session -d -s v -x "${size%x*}" -y "${size#*x}" \
        "exec env MEMTOP_SHM_DIR='$MEMTOP_SHM_DIR' TERM=xterm-256color LANG=C.UTF-8 '$memtop' -p $target_pid -d 1"
    viewer_pid=$(tmux -L "$sock" list-panes -t v -F '#{pane_pid}')
    warm_tui "$keys"
}

capture() { tmux -L "$sock" capture-pane -p -t v 2>/dev/null || true; }

# warm_tui KEYS (tmux key names, space-separated): waits until the table is on screen and no "Resolving"
# remains for 2 polls (or 120 s), prints the seconds it took (to fd 3), then
# sends KEYS and waits 5 s more for the steady state.
warm_tui() {
    local keys=$1 t0=$EPOCHREALTIME ok=0 seen=0 now
    while :; do
        now=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{print b-a}')
        if capture | grep -q 'LIVE' && ! capture | grep -q 'Resolving'; then
            ok=$((ok + 1))
        else
            ok=0
            capture | grep -q 'Resolving' && seen=1
        fi
        [ "$ok" -ge 2 ] && break
        awk -v n="$now" 'BEGIN{exit !(n > 120)}' && break
        sleep 0.25
    done
    warm_s=$(awk -v n="$now" 'BEGIN{printf "%.1f", n - 0.25}')
    [ "$seen" = 1 ] || warm_s="<$warm_s"
    if [ -n "$keys" ]; then
        # shellcheck disable=SC2086 # KEYS is a list of tmux key names
        tmux -L "$sock" send-keys -t v $keys
    fi
    sleep 5
}
stop_tui() {
    capture >"$tmp/screen-$1-$2.txt"
    tmux -L "$sock" send-keys -t v q
    sleep 0.5
    tmux -L "$sock" kill-server 2>/dev/null || true
    viewer_pid=""
}

# measure SCENARIO REP: the viewer (if any) is running; one window.
measure() {
    local sc=$1 rep=$2 v0=0 v1=0 g0 g1 t0 t1
    g0=$(cpu_ticks "$target_pid")
    [ -n "$viewer_pid" ] && v0=$(cpu_ticks "$viewer_pid")
    t0=$EPOCHREALTIME
    sleep "$window"
    t1=$EPOCHREALTIME
    g1=$(cpu_ticks "$target_pid")
    local rss=0 hwm=0
    if [ -n "$viewer_pid" ]; then
        v1=$(cpu_ticks "$viewer_pid")
        rss=$(status_kb "$viewer_pid" VmRSS)
        hwm=$(status_kb "$viewer_pid" VmHWM)
        kill -0 "$viewer_pid" 2>/dev/null || { echo "viewer_cpu.sh: viewer of $sc died" >&2; exit 1; }
    fi
    awk -v sc="$sc" -v r="$rep" -v a="$t0" -v b="$t1" -v v="$((v1 - v0))" -v g="$((g1 - g0))" \
        -v hz="$hz" -v rss="$rss" -v hwm="$hwm" -v w="${warm_s:--}" 'BEGIN {
        d = b - a; printf "%s %d %.2f %d %d %.2f %s\n", sc, r, 100 * v / hz / d, rss, hwm,
            100 * g / hz / d, w }' >>"$results"
}

run_scenario() {
    local sc=$1 rep=$2
    warm_s="-"
    log "rep $rep: $sc"
    case "$sc" in
    none) measure none "$rep" ;;
    tui200) start_tui 200x50 "" && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    tui80) start_tui 80x24 "" && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    detail) start_tui 200x50 "Down Down Enter" && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    group) start_tui 200x50 g && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    tree) start_tui 200x50 t && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    treeleak) start_tui 200x50 "t L" && measure "$sc" "$rep" && stop_tui "$sc" "$rep" ;;
    batch)
        "$memtop" -p "$target_pid" --batch -d 1 --top 20 >/dev/null 2>"$tmp/batch.err" &
        viewer_pid=$!
        sleep 5
        measure "$sc" "$rep"
        kill "$viewer_pid" 2>/dev/null || true
        wait "$viewer_pid" 2>/dev/null || true
        viewer_pid=""
        ;;
    *) echo "viewer_cpu.sh: unknown scenario $sc" >&2; exit 2 ;;
    esac
}

churn_count() { sed -n 's/.* churn=\([0-9]*\).*/\1/p' "$tmp/target.out" | tail -1; }

# slowdown REP: the target churning flat out; its churn rate over slow_w
# seconds with no viewer, with the TUI (200x50) attached, with no viewer again
# (the two no-viewer windows show the drift).
slowdown_rep() {
    local rep=$1 mode c0 c1 t0 t1
    start_target --rate 0 --leak-rate 10
    for mode in none tui200 none; do
        warm_s="-"
        [ "$mode" = tui200 ] && start_tui 200x50 ""
        sleep 2
        c0=$(churn_count)
        t0=$EPOCHREALTIME
        sleep "$slow_w"
        c1=$(churn_count)
        t1=$EPOCHREALTIME
        awk -v m="$mode" -v r="$rep" -v a="$t0" -v b="$t1" -v c="$((c1 - c0))" \
            'BEGIN { printf "%s %d %.0f\n", m, r, c / (b - a) }' >>"$tmp/slowdown"
        [ "$mode" = tui200 ] && stop_tui slow "$rep"
    done
    stop_target
}

median_col() { # median_col SCENARIO COLUMN FILE
    awk -v s="$1" -v c="$2" '$1 == s { print $c }' "$3" | sort -g |
        awk '{ a[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print a[(NR + 1) / 2];
              else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo "machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
    "Linux $(uname -r)"
echo "workload: memtop-many-traces -n $ntraces (churn 300/s, leak 10/s); window ${window}s;" \
    "median of $reps"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= reps; r++)); do
    start_target
    log "rep $r: target $target_pid has $("$totals" "$MEMTOP_SHM_DIR/memtop-$target_pid" |
        sed -n 's/^trace_count=//p') traces"
    for sc in $scenarios; do run_scenario "$sc" "$r"; done
    stop_target
    [ "$slowdown" = 1 ] && slowdown_rep "$r"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
printf "%-8s %14s %10s %10s %13s %10s\n" scenario "viewer_cpu_%" "rss_MB" "hwm_MB" \
    "target_cpu_%" "warmup_s"
for sc in $scenarios; do
    awk -v s="$sc" '$1 == s { w = $7 } END { print w }' "$results" >"$tmp/w"
    printf "%-8s %14s %10s %10s %13s %10s\n" "$sc" "$(median_col "$sc" 3 "$results")" \
        "$(awk -v k="$(median_col "$sc" 4 "$results")" 'BEGIN{printf "%.1f", k / 1024}')" \
        "$(awk -v k="$(median_col "$sc" 5 "$results")" 'BEGIN{printf "%.1f", k / 1024}')" \
        "$(median_col "$sc" 6 "$results")" \
        "$(awk -v s="$sc" '$1 == s { printf "%s%s", sep, $7; sep = "," }' "$results")"
done
echo "(viewer_cpu_% / target_cpu_%: % of one core over the window; warmup_s per repetition:"
echo " seconds until the table showed and no \"Resolving N addresses\" remained, '<' = never seen)"
if [ "$slowdown" = 1 ]; then
    echo
    echo "target churning flat out (--rate 0), churn operations per second, median of $reps:"
    n=$(median_col none 3 "$tmp/slowdown")
    t=$(median_col tui200 3 "$tmp/slowdown")
    echo "  no viewer: $n/s   TUI 200x50 attached: $t/s   ->" \
        "$(awk -v n="$n" -v t="$t" 'BEGIN{printf "%.1f%% slower", 100 * (1 - t / n)}')"
    echo "  per repetition: $(awk '{ printf "%s%s=%s", sep, $1, $3; sep = " " }' "$tmp/slowdown")"
fi
