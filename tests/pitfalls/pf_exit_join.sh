#!/bin/sh
# pf_exit_join.sh SPY LIB SHMDIR -- publish_thread.c, "Short processes": a
# process that ends while its publisher thread is still in its first wait
# (MEMTOP_START_MS) holds it and lets the kernel end it, instead of waking
# and joining it (docs/performance.md, "Sixth round").  The spy
# (progs/pf_join_spy.c) prints "spy-join" for every join.
#  1. a short process's exit: no join;
#  2. a shell's fork child at its exec, and the shell's exit: no join;
#  3. control: with MEMTOP_START_MS=0 the thread is past its first wait,
#     and the exit joins it.
spy=$1 lib=$2 shm=$3
[ -e "$lib" ] || { echo "no libmemtop.so: skipped"; exit 77; }
mkdir -p "$shm" || exit 1
fail=0
run() { env MEMTOP_SHM_DIR="$shm" LD_PRELOAD="$spy:$lib" "$@" 2>&1; }
out=$(run /bin/true)
[ -z "$out" ] || { echo "short process's exit joined its publisher: $out"; fail=1; }
out=$(run bash -c '/bin/true; /bin/true')
[ -z "$out" ] || { echo "bash -c with a fork child joined a publisher: $out"; fail=1; }
out=$(run env MEMTOP_START_MS=0 /bin/true)
[ "$out" = "spy-join" ] || { echo "MEMTOP_START_MS=0: expected one join, got: '$out'"; fail=1; }
[ -z "$(ls -A "$shm")" ] || { echo "segments left in $shm"; fail=1; }
exit $fail
