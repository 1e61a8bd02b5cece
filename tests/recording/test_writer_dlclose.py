"""test_writer_dlclose.py -- a library dlopen'ed, allocated from and
dlclose'd at once has its MODULE record (and its UNLOAD) in the recording,
so that its traces replay with their functions' names.  The writer learns
modules by listing the loaded ones once per pass; a library whose whole
life fell between two passes was never listed, and the traces into it
(its constructor's, plug_alloc's) replayed as bare addresses while the
live export named them.  The dlclose hook now brings the recording's
module map up to date before the library goes (record_thread.c
mt_rec_before_dlclose).  MEMTOP_TEST_WRITER_STALL_MS makes the writer
sleep 1 s after each pass, and the target lets the first pass (at its
start) end before it begins, so every life of the plugin falls between two
passes (the race the tester met by chance, every time)."""
import os
import subprocess

from test_writer_common import args, check, dump, env

N = 20
a = args()
plugin = a.plugin
rec = os.path.join(a.workdir, "dlclose.dat")
p = subprocess.run([os.path.join(a.progs, "writer_dlplug"), plugin, str(N), "100"],
                   env=env(a, MEMTOP_RECORD=rec, MEMTOP_TEST_WRITER_STALL_MS=1000),
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "the target exits 0 (%s)" % p.stderr.strip()[-200:])

info, rows, _ = dump(a, rec, traces=True)
check(info.get("finalized") == 1, "the recording is finalized")
name = os.path.basename(plugin)
in_plugin = [r for r in rows if os.path.basename(r[1]) == name]
check(len(in_plugin) >= 2,
      "the plugin's traces (its constructor's, plug_alloc's) start in a MODULE of %s "
      "(%d traces do; modules %s, unloads %s)"
      % (name, len(in_plugin), info.get("modules"), info.get("unloads")))
check(info.get("unloads", 0) >= 1, "the plugin's unload is recorded (%s)" % info.get("unloads"))
allocs = sum(r[3][0] for r in in_plugin)
check(allocs == 2 * N, "%d allocations from the plugin's code, replayed: %d" % (2 * N, allocs))

r = subprocess.run([a.memtop, "-f", rec, "--export", "-", "--top", "0"], capture_output=True,
                   text=True, timeout=120)
check(r.returncode == 0, "memtop -f --export - reads it (%s)" % r.stderr.strip()[-200:])
check("plug_alloc" in r.stdout, "the replay names plug_alloc")
check("plug_init" in r.stdout, "the replay names plug_init (the constructor)")
