# Real-program workload for sh under libmemtop.so: pipelines of coreutils,
# awk and sed; exits 4.  Every reader drains its input, so no process dies
# of SIGPIPE (a process killed by a signal may leave its segment).
seq 1 50000 | sort -rn | sed -n '1,3p'
seq 1 20000 | awk '{ s += $1 } END { print s }'
printf '%s\n' banana apple cherry | sort | tr a-z A-Z | sed 's/^/fruit: /'
seq 1 1000 | sed 's/.*/abc/' | uniq -c
for i in 1 2 3; do echo "loop $i" | cut -c1-6; done
exit 4
