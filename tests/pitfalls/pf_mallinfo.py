#!/usr/bin/env python3
"""glibc's statistics hold the target's allocator: memtop asks at a pace.

mallinfo2 walks every arena's free chunks while it holds that arena's lock,
so each thread of the target that allocates there waits for the whole walk
(9 to 14 ms with 1 M live blocks: docs/performance.md, "mallinfo2 holds the
target").  A spy preloaded after libmemtop.so (progs/pf_mallinfo_spy.c)
makes each call take 40 ms and reports it.  The target (progs/pf_longrun.c)
publishes every 100 ms and records (a TOTALS every second) for 3 s: memtop
must have walked at most twice (after a 40 ms walk the next is due 40 s
later, core_allocator_figures.c), not at every publish and TOTALS (about
30 times).  The figures it shows meanwhile must say how old they are: the
live export's allocator_age_ms, the --batch report's and the viewer's
header's "(N s ago)", and the recording's, read back at its end.  With
MEMTOP_MALLINFO=off it never walks, and the figure is unknown."""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, wait_for  # noqa: E402

t = Test("mallinfo")
spy = os.path.join(os.path.dirname(t.bin), "lib", "libmtp_mallinfo_spy.so")
if not t.have_lib or not t.memtop:
    t.finish()
shm = t.shm_dir()
pidfile, rec = t.path("pid"), t.path("rec.dat")
p = t.popen_preloaded([t.prog("pf_longrun"), pidfile], shm,
                      {"LD_PRELOAD": t.lib + " " + spy, "MEMTOP_INTERVAL_MS": "100",
                       "MEMTOP_RECORD": rec, "MTP_MALLINFO_MS": "40"})
pid = wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip())
t.check(bool(pid), "the target never wrote its pid")
time.sleep(3)
env = {"MEMTOP_SHM_DIR": shm}
res = t.run([t.memtop, "-p", pid, "--export", t.path("live.json")], "memtop --export", env=env)
live = json.load(open(t.path("live.json")))["totals"] if res.rc == 0 else {}
t.check(res.rc == 0, "memtop -p --export failed", res)
age = live.get("allocator_age_ms", -1)
t.check(age >= 2000 and live.get("allocator_bytes") is not None,
        "live: the allocator's figures from the first walk, ~3 s old: age %s ms, bytes %s"
        % (age, live.get("allocator_bytes")))
res = t.run([t.memtop, "-p", pid, "--batch", "-n", "1"], "memtop --batch", env=env)
t.check(res.rc == 0 and " s ago)" in res.out,
        "--batch says how old the allocator's figures are", res)
if shutil.which("tmux"):  # the viewer's header says it too, on the Allocator field
    sock, sess = t.path("tmux.sock"), "mallinfo"
    tmux = ["tmux", "-S", sock]
    subprocess.run(tmux + ["new-session", "-d", "-s", sess, "-x", "160", "-y", "30",
                           "env", "MEMTOP_SHM_DIR=" + shm, "TERM=xterm", t.memtop, "-p", pid],
                   check=True)
    screen = wait_for(lambda: [ln for ln in subprocess.run(
        tmux + ["capture-pane", "-p", "-t", sess], capture_output=True, text=True).stdout
        .splitlines() if "Allocator" in ln and " s ago)" in ln], 10)
    subprocess.run(tmux + ["kill-server"], capture_output=True)
    t.check(bool(screen), "the viewer's header does not say how old the Allocator figure is")
out, err = p.communicate("", timeout=60)
t.check(p.returncode == 0, "the target exited %d: %s" % (p.returncode, err[-2000:]))
walks = err.count("spy-mallinfo")
t.check(1 <= walks <= 2, "mallinfo2 walked %d times in ~3 s of publishing every 100 ms "
        "and recording: expected 1 or 2 (paced), not one per publish and TOTALS" % walks)
res = t.run([t.memtop, "-f", rec, "--export", t.path("rec.json")], "memtop -f --export")
if t.check(res.rc == 0, "the recording does not open", res):
    tot = json.load(open(t.path("rec.json")))["totals"]
    t.check(tot.get("allocator_age_ms", -1) >= 2000,
            "the recording's last TOTALS says how old its allocator figures are: %s ms"
            % tot.get("allocator_age_ms"))

# MEMTOP_MALLINFO=off: no walk at all, and the figure unknown (null), not 0.
os.unlink(pidfile)
p = t.popen_preloaded([t.prog("pf_longrun"), pidfile], shm,
                      {"LD_PRELOAD": t.lib + " " + spy, "MEMTOP_INTERVAL_MS": "100",
                       "MEMTOP_MALLINFO": "off"})
pid = wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip())
time.sleep(1)
res = t.run([t.memtop, "-p", pid, "--export", t.path("off.json")], "memtop --export", env=env)
off = json.load(open(t.path("off.json")))["totals"] if res.rc == 0 else {}
t.check(res.rc == 0 and "allocator_bytes" in off and off["allocator_bytes"] is None,
        "MEMTOP_MALLINFO=off: the allocator's figure is unknown: %s" % off.get("allocator_bytes"),
        res)
out, err = p.communicate("", timeout=60)
t.check(p.returncode == 0 and "spy-mallinfo" not in err and "memtop" not in err.lower(),
        "MEMTOP_MALLINFO=off: exit %d, no walk and no warning expected: %s"
        % (p.returncode, err[-2000:]))
t.finish()
