"""test_writer_dlclose.py -- a library dlopen'ed, allocated from and
dlclose'd at once has its MODULE record (and its UNLOAD) in the recording,
so that its traces replay with their functions' names, however often it
is loaded again.

The writer learns modules by listing the loaded ones once per pass; a
library whose whole life fell between two passes was never listed, and
the traces into it (its constructor's, plug_alloc's) replayed as bare
addresses while the live export named them.  The dlclose hook now lists
them for the recording before the library goes (record_thread.c
mt_rec_dlclose_modules).  "one": MEMTOP_TEST_WRITER_STALL_MS makes the
writer sleep 1 s after each pass, and the target lets the first pass (at
its start) end before it begins, so every life of the plugin falls between
two passes (the race the tester met by chance, every time).

"many": 5000 lives one pass apart each write a MODULE and an UNLOAD (a
service that runs a plugin every few seconds); the writer's slots of
unloaded modules are taken again (record_records.c free_slot), so a
library loaded after MT_RECW_MODULES_MAX (4096) lives still gets its
MODULE: a second plugin loaded beside the first, whose functions must be
named.  The writer passes every ~1 ms (MEMTOP_TEST_WRITER_SPIN_MS=1: it
spins 1 ms between passes, not the idle 5 ms) and the target naps 2 ms
between lives, so each life still falls in a pass of its own (about 12 s;
it was 30 s with the idle writer and 6 ms naps).

"slowdisk": each write(2) to the file takes a second
(MEMTOP_TEST_WRITE_DELAY_US).  A dlclose must not wait for it: under the
writer's lock it only appends its MODULE to the records not yet
compressed (record_zstd.c, mt_w.no_io), never compresses or writes, and it
gives up at once when the lock's holder is inside a slow write.  Before,
the MODULE that filled the slow stream's small frame (24 KiB) ended it,
and that dlclose -- on the program's thread, maybe inside the loader's
lock -- waited for the disk: the longest took over a second.

"swap": a plugin unloaded and another loaded at the same address
(writer_dlswap) is a module of its own, live and in the recording: both
the publisher and the writer knew a module by its address alone, so the
second plugin's frames were named from the first one's file (plug_alloc
for plug_b_alloc).  A module is now known by its address, build-id
and size (publish_modules.c module_ident), in the publisher and in the
writer: each half of the check fails without its half of the change.
(The loader may put the second plugin elsewhere, if something else took
the hole: the target is run again, up to 5 times; then the part is
skipped, exit 77, after the other parts.)  The first plugin's block, still
live (a leak), must keep the first plugin's name, plug_alloc at its line,
live (text and JSON exports) and replayed: its frame's address is now the
second plugin's, and the viewer named every module lookup "loaded, else
the newest" (plug_b_alloc).  An unload is now stamped with the next trace
id (the dlclose hook lists the modules again after the real dlclose: the
segment's unload_trace, the UNLOAD record's next_trace), and a trace's
frames are looked up in the module that held them when it was taken
(shm_modules.h mt_modules_find_at).  The constructors' blocks (4321 bytes
by plug_init, 5432 by plug_b_init, at the same offset in each plugin) have
backtraces of the same addresses (the target loads both from one call
site): the second one got the first one's trace id, deduplicated by its
addresses, and was named plug_init, live and replayed.  A dlclose now
retires the traces into the modules it unloaded (table_trace_index.c,
"Retired traces"): the second one's is a trace of its own.

"lives": 15000 lives of one plugin at one place, then a second plugin, seen
live (memtop -- PROG --export: the exited segment's final state).  Each
dlclose now lists the modules after the real one, which marks the plugin
unloaded at once: a module record per life would fill the segment's module
area (8 MiB, ~13,800 records) and leave the second plugin without a module
(its frames bare addresses).  A library loaded again at its last life's
place with no record appended since gets that record back
(publish_modules.c revive): one record for all the lives.  Its traces, retired
at each dlclose (see "swap"), are given back at each life: the same build is
at their place again (its build-id where it was: table_trace_places.c);
else each life had traces of its own (30025 traces, not 27, and each
dlclose scanned more of them: 16 s, not 2).

"seccomp": the same 5 lives under a seccomp filter that kills the process on
process_vm_readv (a hardened service's SystemCallFilter may): the give-back
read the old build-id's place with it, and the target died (SIGSYS) at the
plugin's second life; it reads through /proc/thread-self/mem now.

"deleted": a module stays one module when its path, read again at each
walk, changes: a service whose binary an upgrade replaced reads
"/usr/sbin/x (deleted)" from /proc/self/exe.  A module is known by its
build-id, not its path, when it has one; else the main program was
unloaded and loaded again at the next walk (a MODULE and an UNLOAD more)."""
import json
import os
import re
import shutil
import sys
import subprocess

from test_writer_common import args, check, dump, env, start

a = args()


def record(name, argv, **extra):
    rec = os.path.join(a.workdir, name + ".dat")
    p = subprocess.run([os.path.join(a.progs, "writer_dlplug")] + argv,
                       env=env(a, MEMTOP_RECORD=rec, **extra), capture_output=True, text=True,
                       timeout=200)
    check(p.returncode == 0, "%s: the target exits 0 (%s)" % (name, p.stderr.strip()[-200:]))
    info, rows, _ = dump(a, rec, traces=True)
    check(info.get("finalized") == 1, "%s: the recording is finalized" % name)
    r = subprocess.run([a.memtop, "-f", rec, "--export", "-", "--top", "0"], capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0,
          "%s: memtop -f --export - reads it (%s)" % (name, r.stderr.strip()[-200:]))
    return info, rows, r.stdout, p.stdout


def traces_in(rows, plugin):
    return [r for r in rows if os.path.basename(r[1]) == os.path.basename(plugin)]


# One plugin, 20 lives between two passes: each needs the MODULE written at its dlclose.
N = 20
info, rows, text, _ = record("one", ["100", str(N), "0", a.plugin], MEMTOP_TEST_WRITER_STALL_MS=1000)
in_plugin = traces_in(rows, a.plugin)
check(len(in_plugin) >= 2,
      "one: the plugin's traces (its constructor's, plug_alloc's) start in its MODULE "
      "(%d traces do; modules %s, unloads %s)"
      % (len(in_plugin), info.get("modules"), info.get("unloads")))
check(info.get("unloads", 0) >= 1, "one: the plugin's unload is recorded (%s)" % info.get("unloads"))
allocs = sum(r[3][0] for r in in_plugin)
check(allocs == 2 * N, "one: %d allocations from the plugin's code, replayed: %d" % (2 * N, allocs))
check("plug_alloc" in text, "one: the replay names plug_alloc")
check("plug_init" in text, "one: the replay names plug_init (the constructor)")

# 5000 lives one pass apart (a pass every ~1 ms, a life every 2 ms), then a second plugin
# beside the first.
N = 5000
info, rows, text, _ = record("many", ["100", str(N), "2000", a.plugin, a.plugin_b],
                             MEMTOP_TEST_WRITER_SPIN_MS=1)
# (dat_dump keeps the first 4096 modules only: the replay is the judge.)
for fn in ("plug_b_alloc", "plug_b_init"):
    check(fn in text, "many: the replay names " + fn)
lives = info.get("unloads", 0)
check(lives > 4096, "many: more lives recorded than the writer has module slots (%d MODULE, %d "
      "UNLOAD)" % (info.get("modules", 0), lives))

# A second per write(2): 1500 lives a millisecond apart, ~110 bytes of MODULE each.
N = 1500
info, rows, text, out = record("slowdisk", ["100", str(N), "1000", a.plugin],
                               MEMTOP_TEST_WRITER_STALL_MS=1000,
                               MEMTOP_TEST_WRITE_DELAY_US=1000000)
longest = [int(l.split()[2]) for l in out.splitlines() if l.startswith("longest dlclose:")]
check(len(longest) == 1, "slowdisk: the target says its longest dlclose (%r)" % out[-200:])
check(longest[0] < 500000,
      "slowdisk: no dlclose waits for a write that takes a second (the longest: %d us)"
      % longest[0])
check(len(traces_in(rows, a.plugin)) >= 1,
      "slowdisk: the lives between the writer's writes name the plugin (modules %s)"
      % info.get("modules"))

# 15000 lives at one place, then a second plugin: named live, the module area not full.
r = subprocess.run([a.memtop, "--export", "-", "--top", "0", "--",
                    os.path.join(a.progs, "writer_dlplug"), "100", "15000", "0", a.plugin,
                    a.plugin_b], env=dict(os.environ, MEMTOP_SHM_DIR=a.workdir),
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0, "lives: memtop -- writer_dlplug --export - (%s)" % r.stderr.strip()[-200:])
check("plug_b_alloc (writer_plug.c" in r.stdout,
      "lives: after 15000 lives of the first plugin, the second one's plug_b_alloc is named live "
      "(its module was published)")
ntraces = re.search(r"(\d+) traces", r.stderr)
check(ntraces and int(ntraces.group(1)) < 1000,
      "lives: each life of the plugin, the same build at the same place, gets its traces back "
      "(%s traces)" % (ntraces.group(1) if ntraces else r.stderr.strip()[-200:]))

# A second plugin where the first was: its allocation of 556 bytes by plug_b_alloc named so.
def named_b(text):
    """The export's row of 556 bytes names plug_b_alloc as its frame 0."""
    rows = text.split("\n#")
    row = [r for r in rows if "live 556 B in 1 blocks" in r]
    return len(row) == 1 and "plug_b_alloc (writer_plug.c" in row[0], row


# The first plugin's plug_alloc: the line of its malloc (the first in writer_plug.c's plug_alloc).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "writer_plug.c")) as src:
    PLUG_A_LINE = [i + 1 for i, l in enumerate(src) if "void *volatile p = malloc(n);" in l][0]


def named_a(text):
    """The export's row of the first plugin's 777 bytes names its plug_alloc as frame 0."""
    rows = text.split("\n#")
    row = [r for r in rows if "live 777 B in 1 blocks" in r]
    want = "plug_alloc (writer_plug.c:%d)" % PLUG_A_LINE
    frame0 = [l for l in row[0].split("\n") if l.strip().startswith("0  0x")] if row else []
    return len(row) == 1 and len(frame0) == 1 and frame0[0].endswith(want), row


def named_ctor(text, fn):
    """The export has one row whose frame 0 is FN (a constructor), of one block."""
    rows = text.split("\n#")
    frame0 = [r for r in rows
              if [l for l in r.split("\n") if l.strip().startswith("0  0x") and
                  (" %s (writer_plug.c" % fn) in l]]
    return len(frame0) == 1 and " in 1 blocks," in frame0[0], \
        frame0 or [r for r in rows if "init (writer_plug.c" in r]


def named_a_json(path):
    """The same in a JSON export: the 777-byte trace's frame 0."""
    with open(path) as f:
        traces = [t for t in json.load(f)["traces"] if t.get("live_bytes") == 777]
    fr = traces[0]["frames"][0] if len(traces) == 1 and traces[0]["frames"] else {}
    return fr.get("function") == "plug_alloc" and fr.get("line") == PLUG_A_LINE, fr


def export(src, name):
    """memtop SRC --export (text to stdout, and NAME.json): (text, json path)."""
    jpath = os.path.join(a.workdir, name + ".json")
    menv = dict(os.environ, MEMTOP_SHM_DIR=a.workdir)
    out = []
    for dest in ("-", jpath):
        r = subprocess.run([a.memtop] + src + ["--export", dest, "--top", "0"], env=menv,
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "swap: memtop %s --export %s (%s)" % (src, dest, r.stderr[-200:]))
        out.append(r.stdout)
    return out[0], jpath


for attempt in range(5):
    rec = os.path.join(a.workdir, "swap%d.dat" % attempt)
    p = start([os.path.join(a.progs, "writer_dlswap"), a.plugin, a.plugin_b, "4000"],
              env=env(a, MEMTOP_RECORD=rec), stdout=subprocess.PIPE, text=True)
    where = p.stdout.readline().strip()
    check(p.stdout.readline().strip() == "ready", "swap: the target is ready")
    if where == "same place":
        break
    p.kill()
    p.wait()
swapped = where == "same place"
if swapped:
    text, jpath = export(["-p", str(p.pid)], "swap-live")
    for how, (ok, row) in (("", named_b(text)), ("", named_a(text)),
                           (" (JSON)", named_a_json(jpath))):
        check(ok, "swap: live%s, each plugin's allocation is named from its own plugin "
              "(plug_b_alloc for 556 B, plug_alloc:%d for 777 B): %r" % (how, PLUG_A_LINE, row))
    for size, fn in ((4321, "plug_init"), (5432, "plug_b_init")):
        ok, row = named_ctor(text, fn)
        check(ok, "swap: live, the constructors' blocks, of backtraces at the same addresses, each "
              "have a trace of their own, named from their own plugin (%s for %d B): %r"
              % (fn, size, row))
    check(p.wait(timeout=60) == 0, "swap: the target exits 0")
    text, jpath = export(["-f", rec], "swap-replay")
    for how, (ok, row) in (("", named_b(text)), ("", named_a(text)),
                           (" (JSON)", named_a_json(jpath))):
        check(ok, "swap: replayed%s, each plugin's allocation is named from its own plugin "
              "(plug_b_alloc for 556 B, plug_alloc:%d for 777 B): %r" % (how, PLUG_A_LINE, row))
    for size, fn in ((4321, "plug_init"), (5432, "plug_b_init")):
        ok, row = named_ctor(text, fn)
        check(ok, "swap: replayed, the constructors' blocks, of backtraces at the same addresses, "
              "each have a trace of their own, named from their own plugin (%s for %d B): %r"
              % (fn, size, row))


# The main program's file removed under it (an upgrade): as many modules and unloads as with it.
def swap_counts(name, extra):
    exe = os.path.join(a.workdir, "dlswap-" + name)
    shutil.copy(os.path.join(a.progs, "writer_dlswap"), exe)
    rec = os.path.join(a.workdir, name + ".dat")
    p = subprocess.run([exe, a.plugin, a.plugin_b, "0"] + extra, env=env(a, MEMTOP_RECORD=rec),
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "deleted: %s: the target exits 0 (%s)" % (name, p.stderr.strip()))
    info, _, _ = dump(a, rec)
    return info.get("modules"), info.get("unloads")


# A hardened service: a seccomp filter kills the process on process_vm_readv.
# The plugin's second life at its place gives its traces back after reading
# the build-id where it was: never through that call (it killed the target).
info, rows, _, _ = record("seccomp", ["0", "5", "0", a.plugin], WRITER_DLPLUG_SECCOMP="1")
allocs = sum(r[3][0] for r in traces_in(rows, a.plugin))
check(allocs == 2 * 5, "seccomp: 10 allocations from the plugin's code, replayed: %d" % allocs)

kept, gone = swap_counts("kept", []), swap_counts("gone", ["unlink-self"])
check(not os.path.exists(os.path.join(a.workdir, "dlswap-gone")),
      "deleted: the target removed its own file")
check(gone == kept, "deleted: (MODULE, UNLOAD) records with the program's file removed %s, "
      "kept %s" % (gone, kept))
if not swapped:
    print("SKIP: swap: the loader never put the second plugin where the first was (5 runs): "
          "nothing to check there")
    sys.exit(77)
