#!/usr/bin/env bash
# bench/redis.sh -- what does memtop cost a real server?  Starts redis-server
# on 127.0.0.1 plain, with libmemtop.so in sampled mode (MEMTOP_SAMPLE) and,
# with -e, in exact mode; interleaved (plain, sampled, exact, plain, ...) K
# times, a fresh server each run; redis-benchmark loads it; prints each
# run's throughput and the server's CPU seconds (used_cpu_user + sys from
# INFO: the whole server, memtop's publisher included), then the medians
# and ratios to plain, and the load average before and after.
# Needs redis-server, redis-benchmark, redis-cli (Debian: redis-server,
# redis-tools).  See docs/performance.md ("Sampled tracking").
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/redis.sh [options]
  -b DIR        build directory (default: <repo>/build)
  -k N          rounds, the median is reported (default 5)
  -n N          requests per test (default 100000)
  -c N          parallel clients (default 20)
  -t TESTS      redis-benchmark tests (default set,get,incr,lpush,lpop,sadd,hset)
  -s BYTES      MEMTOP_SAMPLE of the sampled column (default 512k)
  -B NAME=LIB   also run another libmemtop.so sampled, as column NAME
                (repeatable; e.g. -B base=/tmp/base/build/lib/libmemtop.so)
  -e            also run exact mode (column "exact")
  -h            this help
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build"
reps=5
requests=100000
clients=20
tests=set,get,incr,lpush,lpop,sadd,hset
sample=512k
others=()
exact=0
while [ $# -gt 0 ]; do
    case "$1" in
    -b) build=$2; shift 2 ;;
    -k) reps=$2; shift 2 ;;
    -n) requests=$2; shift 2 ;;
    -c) clients=$2; shift 2 ;;
    -t) tests=$2; shift 2 ;;
    -s) sample=$2; shift 2 ;;
    -B) others+=("$2"); shift 2 ;;
    -e) exact=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "redis.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

lib="$build/lib/libmemtop.so"
[ -f "$lib" ] || { echo "redis.sh: $lib not built" >&2; exit 1; }
for o in ${others[@]+"${others[@]}"}; do
    [ -f "${o#*=}" ] && [ "${o%%=*}" != "$o" ] || { echo "redis.sh: -B $o: not NAME=LIB" >&2; exit 1; }
done
for c in redis-server redis-benchmark redis-cli python3; do
    command -v "$c" >/dev/null || { echo "redis.sh: $c not installed" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtop-redis.XXXXXX")
server=""
cleanup() {
    [ -z "$server" ] || kill "$server" 2>/dev/null || true
    [ -z "$server" ] || wait "$server" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/shm"
export MEMTOP_SHM_DIR="$tmp/shm"
# A password nobody else knows: other users can reach 127.0.0.1 too.
pass=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export REDISCLI_AUTH="$pass"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run_one MODE ROUND: a fresh server under MODE, the benchmark, its figures.
run_one() {
    local mode=$1 round=$2 port env=()
    port=$(free_port)
    case "$mode" in
    sampled) env=(MEMTOP_SAMPLE="$sample" LD_PRELOAD="$lib") ;;
    exact) env=(LD_PRELOAD="$lib") ;;
    plain) ;;
    *) for o in "${others[@]}"; do
        [ "${o%%=*}" = "$mode" ] && env=(MEMTOP_SAMPLE="$sample" LD_PRELOAD="${o#*=}")
    done ;;
    esac
    env ${env[@]+"${env[@]}"} redis-server --bind 127.0.0.1 --port "$port" --save "" \
        --appendonly no --dir "$tmp" --requirepass "$pass" --logfile "$tmp/server.log" &
    server=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.05
    done
    redis-benchmark -p "$port" -a "$pass" -q -n "$requests" -c "$clients" -t "$tests" \
        2>/dev/null | tr '\r' '\n' | grep 'requests per second' >"$tmp/bench.txt" || true
    local cpu
    cpu=$(redis-cli -p "$port" info cpu | tr -d '\r' |
        awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {printf "%.2f", s}')
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$server" 2>/dev/null || true
    server=""
    # one line per test: round mode test rps, then the CPU line
    awk -v r="$round" -v m="$mode" -F': ' '{split($2, a, " "); print r, m, $1, a[1]}' \
        "$tmp/bench.txt" >>"$tmp/results"
    echo "$round $mode _cpu_s $cpu" >>"$tmp/results"
}

modes=(plain sampled)
for o in ${others[@]+"${others[@]}"}; do modes+=("${o%%=*}"); done
[ "$exact" = 0 ] || modes+=(exact)
: >"$tmp/results"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$reps"); do
    for m in "${modes[@]}"; do
        printf '\r[redis.sh] round %d/%d, %-8s' "$r" "$reps" "$m" >&2
        run_one "$m" "$r"
    done
done
printf '\r%40s\r' '' >&2
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "redis-benchmark -q -n $requests -c $clients -t $tests, $reps rounds, MEMTOP_SAMPLE=$sample"
python3 - "$tmp/results" "${modes[@]}" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
modes = sys.argv[2:]
val = {}
for r, m, *name, v in rows:
    val.setdefault((" ".join(name), m), {})[int(r)] = float(v)
names = list(dict.fromkeys(" ".join(x[2:-1]) for x in rows))
print("%-10s" % "test" + "".join("%12s" % m for m in modes) +
      "".join(" %12s" % (m[:6] + "/plain") for m in modes[1:]))
for n in names:
    med = [statistics.median(val[(n, m)].values()) for m in modes]
    # ratio: median over rounds of each round's ratio to that round's plain
    rat = []
    for m in modes[1:]:
        pl, x = val[(n, "plain")], val[(n, m)]
        rat.append(statistics.median(x[r] / pl[r] for r in x if r in pl and pl[r] > 0))
    label = "CPU s" if n == "_cpu_s" else n
    print("%-10s" % label + "".join("%12.2f" % v for v in med) + "".join(" %12.3f" % v for v in rat))
print("(rows: requests per second, medians; CPU s: the server's CPU seconds for the whole run)")
EOF
