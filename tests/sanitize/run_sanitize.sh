#!/usr/bin/env bash
# run_sanitize.sh SOURCE_DIR TREE CMAKE CTEST -- configure and build memtop in
# TREE as Debug with -DMEMTOP_SANITIZE=ON, build what the pitfalls and unwind
# labels' tests run (the target sanitize_needs), then run those labels there
# (tests/sanitize/CMakeLists.txt says why).  Exits non-zero if the build or
# any of those tests fails.  Sanitizer reports abort the process
# that made them (-fno-sanitize-recover, halt_on_error), so they fail a test;
# leak detection is off (the tests kill programs on purpose).
# No -DMEMTOP_WERROR: at -O0 with the sanitizers GCC warns falsely (e.g.
# -Wrestrict in code_patch.c); the normal build keeps -Werror.
set -euo pipefail
src=$1 tree=$2 cmake=$3 ctest=$4
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$tree"
log=$tree/build.log
# Debug (no NDEBUG: assertions on) at -O2, not Debug's -O0: at -O0 the hooks
# keep frames that -O2 inlines, and MEMTOP_UNWIND=check then reports
# mismatches of truncated traces (unwind_* tests) that no release build has.
if ! { "$cmake" -S "$src" -B "$tree" -DCMAKE_BUILD_TYPE=Debug -DMEMTOP_SANITIZE=ON \
    "-DCMAKE_C_FLAGS_DEBUG=-g -O2" "-DCMAKE_CXX_FLAGS_DEBUG=-g -O2" &&
    "$cmake" --build "$tree" -j2 --target sanitize_needs; } >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "run_sanitize.sh: the sanitizer build failed (log: $log)" >&2
    exit 1
fi
# unwind_dlclose_reuse is left out: it wants no walk at all to fall back to
# libunwind, and the UBSan runtime that libmemtop.so brings into the target
# makes one allocation the own walker cannot walk (its frames are not the
# program's; the test passes in the normal build).
"$ctest" --test-dir "$tree" -L 'pitfalls|unwind' -E '^unwind_dlclose_reuse$' --output-on-failure
