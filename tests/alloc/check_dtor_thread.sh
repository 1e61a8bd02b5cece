#!/bin/sh
# check_dtor_thread.sh -- a program's last dlclose of a library memtop did
# not hook unloads it, on the program's thread, also while a scan holds a
# reference to it (src/preload/alloc/alloc_scan.c take_ref, reserve_ref,
# mt_alloc_close_begin).  The race is narrow: RUNS runs of alloc_dtor_race
# under memtop; none may see the library's destructor run on another
# thread (a scan's dlclose: there memtop does not see its frees).  Without
# the dlclose's wait for the scans' references 9 to 12 runs in 300 failed
# (5 test runs of 5); with the wait but without the gate that keeps a scan
# from taking a reference during the dlclose, 1 in 300 (a CI run), 1 in
# 2400; with both, 0 in 4800.
# Usage: check_dtor_thread.sh PRELOAD PROGRAM LIBRARY [RUNS]
preload=$1 prog=$2 lib=$3 runs=${4:-300}
[ "$(uname -m)" = x86_64 ] || exit 77 # the library's fake entries are x86-64
if ! "$prog" "$lib"; then
    echo "the program fails without memtop" >&2
    exit 1
fi
bad=0
i=0
while [ $i -lt "$runs" ]; do
    out=$(LD_PRELOAD=$preload "$prog" "$lib" 2>&1) || { echo "run $i failed: $out" >&2; exit 1; }
    case $out in *"destructor on thread"*) bad=$((bad + 1)) ;; esac
    i=$((i + 1))
done
echo "$bad of $runs runs: the library's destructor ran on another thread"
[ $bad -eq 0 ]
