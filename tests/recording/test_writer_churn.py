"""test_writer_churn.py -- thread churn while recording (MEMTOP_RECORD from
the start): 3000 short-lived threads, one alive at a time.  The ring of an
exited thread must be recycled as soon as the writer drained it, and
unmapped beyond a few free ones, so the target's address space does not
grow by a ring per thread created (320 KiB then, 256 KiB now) (it grew by ~1 GB for 20,000
threads before: rings were reclaimed once a second and never unmapped).
Every thread's events -- including those it makes after memtop's key
destructor retired its ring (a later key's destructor, and a signal
handler raised there) -- must be in the file, attributed to that thread,
in its order, with nothing dropped.  (MALLOC_ARENA_MAX=1: glibc's per-thread
arenas would add up to 64 MiB each of address space of their own;
MEMTOP_START_MS=0: the 1 GiB segment mapped before the first VmSize, not
between the two.)"""
import os
import subprocess

from test_writer_common import args, check, env

N = 3000
a = args()
rec = os.path.join(a.workdir, "churn.dat")
p = subprocess.run([os.path.join(a.progs, "writer_churn"), str(N)], env=env(a, MEMTOP_RECORD=rec, MALLOC_ARENA_MAX=1,
                                                                       MEMTOP_START_MS="0"),
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "the target exits 0 (%s)" % p.stderr.strip()[-200:])
tid_of, vm = {}, None
for line in p.stdout.splitlines():
    f = line.split()
    if f[0] == "thread":
        tid_of[int(f[2])] = int(f[1])
    elif f[0] == "vm":
        vm = (int(f[1]), int(f[2]))
check(len(tid_of) == N and vm is not None, "the target reports its threads and VmSize")
grown_mb = (vm[1] - vm[0]) / 1024.0
check(grown_mb < 48, "VmSize grew by %.1f MiB for %d threads (at most 48 MiB)" % (grown_mb, N))

ev = subprocess.run([os.path.join(a.progs, "writer_events"), rec], capture_output=True, text=True,
                    timeout=120)
check(ev.returncode == 0, "the recording reads back (%s)" % ev.stderr.strip())
seen, dropped, lost = {}, None, 0
for line in ev.stdout.splitlines():
    f = line.split()
    if f[0] in ("a", "f"):
        size = int(f[2])
        base = size - (size - 100000) % 4
        if size >= 100000 and base in tid_of:
            seen.setdefault(base, []).append((f[0], int(f[1]), size - base))
    elif f[0] == "lost":
        lost += int(f[2]) + int(f[3])
    elif f[0] == "end":
        dropped = int(f[1])
check(dropped == 0 and lost == 0, "finalized, nothing dropped (%s, %d lost)" % (dropped, lost))
want = [("a", 0), ("f", 0), ("a", 1), ("f", 1), ("a", 2), ("f", 2)]
bad = []
for base, tid in tid_of.items():
    got = seen.get(base, [])
    if [(k, d) for k, _, d in got] != want or any(t != tid for _, t, _ in got):
        bad.append((base, tid, got))
check(not bad, "every thread's 6 events, its own tid, in order (%d wrong: %s)" % (len(bad), bad[:2]))
