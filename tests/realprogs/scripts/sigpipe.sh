# Real-program workload for sh under libmemtop.so: writers killed by
# SIGPIPE mid-stream (yes, seq), as in everyday shell use.
yes abc | head -n 1000 | wc -l
seq 1 100000 | head -n 2
exit 0
