#!/usr/bin/env bash
# install-deps.sh -- installs what memtop needs to build and test on Debian 12.
#
# Why it exists: the README's two set-up commands and CI (.ci/run) start from
# a fresh machine, so the project must install its own dependencies.  The
# script is idempotent and prints nothing when everything is already there:
# it asks dpkg-query first and runs apt-get (update + install) only for the
# packages that are missing.  It uses sudo only when not run as root.
#
# Usage: scripts/install-deps.sh [--bench] [--fuzz] [--all] [--list]
#   --bench  also install heaptrack (bench/ compares against it)
#   --fuzz   also install clang (the libFuzzer build of the reader)
#   --all    both of the above
#   --list   print the packages that would be required, install nothing
set -euo pipefail

# Build: compiler, cmake, pkg-config and the libraries CMakeLists.txt finds
# (libzydis-dev: the x86-64 decoder that redirects allocator entry points).
# For pprof profiles and --serve (src/tui/fleet): libprotobuf-c-dev (the
# protobuf runtime the encoder links), protobuf-c-compiler (protoc-c
# generates the C code at build time), golang-github-google-pprof-dev (it
# ships pprof's profile.proto, the schema generated from), zlib1g-dev
# (profiles are gzip'd), libmicrohttpd-dev (the exporter's HTTP server),
# libdebuginfod-dev (the symbolizer bounds the debuginfod queries libdwfl makes).
build_pkgs=(build-essential cmake pkg-config libunwind-dev libdw-dev libelf-dev
    libzstd-dev liblzma-dev libncurses-dev libiberty-dev libzydis-dev
    libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev zlib1g-dev
    libmicrohttpd-dev libdebuginfod-dev)
# Tests: cmocka (unit tests), binutils (nm/readelf for the e2e tests),
# python3 (e2e scripts), tmux (TUI tests), python3/perl/git/sqlite3/zstd as
# real programs run under the preload, and LLVM's libunwind runtime (a
# program with a second unwinder, tests/pitfalls; not its -dev package,
# which conflicts with libunwind-dev), and for tests/completions: the shells
# whose completions run for real (bash-completion, fish, zsh) and groff-base
# and man-db (render memtop(1) with warnings on), and for tests/alloc: programs on
# jemalloc, static (libjemalloc.a) and shared (libjemalloc-dev), and a Rust program on an
# _rjem_-prefixed jemalloc (rustc, which tests/symbolize's sym_rust and tests/fleet's
# pprof_names also need: they skip without it); mimalloc (libmimalloc-dev) and static tcmalloc
# (libgoogle-perftools-dev), which memtop finds and reports; redis-server, a real
# service whose allocator wrappers (zmalloc) the location must see past
# (tests/realprogs/rp_redis.py); dwz (tests/security shares a program's DWARF out
# into a dwz alternate file); for tests/fleet: protobuf-compiler (protoc --decode
# reads the pprof profiles), golang-go (go tool pprof must agree with the
# JSON), prometheus (a real server scrapes --serve; promtool checks /metrics),
# systemd (systemd-analyze verify checks the exporter's unit, tests/fleet);
# xz-utils (tests/alloc's MiniDebugInfo: xz compresses the .gnu_debugdata it adds);
# strace (tests/pitfalls' pitfall_syscalls counts a thread's system calls);
# postgresql-15 (tests/realprogs/rp_postgres.py: a forking server, initdb and
# pgbench, all preloaded); locales (the locale sources localedef builds
# de_DE.UTF-8 from: tests/tui's export_locale checks the exports under a
# comma-decimal locale, and skips without them); lld (tests/fleet's
# pprof_mapping links a program whose code lies at a file offset other than
# its address, as lld and rustc lay it out; skips without it).
test_pkgs=(libcmocka-dev binutils elfutils python3 perl git sqlite3 zstd tmux procps xz-utils strace
    libunwind-14 bash-completion fish zsh groff-base man-db libjemalloc-dev rustc
    libmimalloc-dev libgoogle-perftools-dev redis-server dwz protobuf-compiler golang-go
    prometheus systemd postgresql-15 locales lld)
bench_pkgs=(heaptrack)
fuzz_pkgs=(clang)

usage() {
    cat <<'EOF'
usage: scripts/install-deps.sh [--bench] [--fuzz] [--all] [--list]
  --bench  also install heaptrack (bench/ compares against it)
  --fuzz   also install clang (the libFuzzer build of the reader)
  --all    both of the above
  --list   print the required packages, install nothing
EOF
}

want=("${build_pkgs[@]}" "${test_pkgs[@]}")
list_only=0
for arg in "$@"; do
    case "$arg" in
    --bench) want+=("${bench_pkgs[@]}") ;;
    --fuzz) want+=("${fuzz_pkgs[@]}") ;;
    --all) want+=("${bench_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
    --list) list_only=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "install-deps.sh: unknown option '$arg' (try --help)" >&2
        exit 2
        ;;
    esac
done

if [ "$list_only" = 1 ]; then
    printf '%s\n' "${want[@]}"
    exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: this script needs Debian's dpkg-query and apt-get;" \
        "install these packages by other means: ${want[*]}" >&2
    exit 1
fi

# A package counts as installed when dpkg says "install ok installed".
missing=()
for pkg in "${want[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [ "$status" != "install ok installed" ]; then
        missing+=("$pkg")
    fi
done
[ "${#missing[@]}" -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps.sh: not root and no sudo; as root run:" \
            "apt-get install ${missing[*]}" >&2
        exit 1
    fi
    sudo_cmd=(sudo)
fi

# Three test packages are services that Debian starts and enables when it
# installs them: redis on 127.0.0.1:6379 without a password, prometheus on
# port 9090 of every interface, a PostgreSQL cluster on 5432.  The tests run
# their own instances, so on a developer's machine none is started here
# (a policy-rc.d that refuses, for the length of the install, unless the
# machine has one) nor enabled for the next boot.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# install-deps.sh: no service starts while it installs\nexit 101\n' |
        "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod 755 "$policy"
    made_policy=1
    trap '[ "$made_policy" = 1 ] && "${sudo_cmd[@]}" rm -f "$policy"' EXIT
fi

echo "install-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq update </dev/null
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -y \
    -o Dpkg::Use-Pty=0 install --no-install-recommends "${missing[@]}" </dev/null >/dev/null

# The services of packages installed just now, disabled where systemd runs.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    for pkg in "${missing[@]}"; do
        case "$pkg" in
        redis-server) unit=redis-server ;;
        prometheus) unit=prometheus ;;
        postgresql-15) unit=postgresql ;;
        *) continue ;;
        esac
        "${sudo_cmd[@]}" systemctl disable --quiet "$unit" 2>/dev/null || true
        echo "install-deps.sh: $unit is installed for the tests, not started nor enabled" >&2
    done
fi
