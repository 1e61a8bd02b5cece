"""test_writer_cull.py -- culled recordings (issue 19, MEMTOP_RECORD_MODE=culled,
MEMTOP_CULL_SECS=1 here).  Each part fails without culling:
  - same end state: a deterministic run (writer_cull mix) recorded full and
    culled gives, per call site, the same replayed counters (to the byte),
    equal to the FINAL state; the culled file is smaller and counts most
    blocks in CULLED records;
  - the threshold: a block living 0.6 s is culled (counted, no event), one
    living 1.6 s is written (its allocation and its free);
  - the young-block bound (MEMTOP_CULL_BLOCKS=16, 200 blocks young at
    once): blocks are written early, counted, and the end state is still
    the full recording's;
  - a SIGKILLed culled recording decodes (not finalized) and memtop opens it;
  - memtop -f says the recording is culled and by what threshold."""
import os
import signal
import subprocess
import time

from test_writer_common import args, check, dump, env, functions, name_of, record_attached

a = args()
prog = os.path.join(a.progs, "writer_cull")
funcs = [(s, e, n.split(".")[0]) for s, e, n in functions(prog)]  # site_x.constprop.0
CULL = dict(MEMTOP_RECORD_MODE="culled", MEMTOP_CULL_SECS="1")


def record(name, argv, **extra):
    path = os.path.join(a.workdir, name + ".dat")
    p = subprocess.run([prog] + argv, timeout=120, env=env(a, MEMTOP_RECORD=path, **extra))
    check(p.returncode == 0, "%s: the target ran" % name)
    return path


def by_site(rows):
    """{site function: [6 replayed counters, events alloc/free, culled]} of prog's traces."""
    sites = {}
    for tid, mod, off, replay, final in rows:
        if os.path.realpath(mod) != os.path.realpath(prog):
            continue
        s = sites.setdefault(name_of(funcs, off), [0] * 6)
        for i in range(6):
            s[i] += replay[i]
    return sites


def extras(path):
    """{site: (alloc events, free events, culled)} from dat_dump's trace lines."""
    out = subprocess.run([a.dump, "--traces", path], capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        if not line.startswith("trace ") or " events " not in line:
            continue
        parts = line.split()
        if os.path.realpath(parts[3]) != os.path.realpath(prog):
            continue
        site = name_of(funcs, int(parts[4], 16))
        ev = line.split(" events ")[1].split()
        old = res.get(site, (0, 0, 0))
        res[site] = (old[0] + int(ev[0]), old[1] + int(ev[1]), old[2] + int(ev[3]))
    return res


def same_end(full, culled, what):
    fi, frows, _ = dump(a, full, traces=True)
    ci, crows, _ = dump(a, culled, traces=True)
    # a culled recording keeps the threads' order (PROCESS order 0); a full
    # one is in tick order by default (order 1): version 8, the culled one 6
    check(ci["version"] == 6 and ci["record_mode"] == 1 and ci["cull_ms"] == 1000 and
          ci["tick_order"] == 0, "%s: culled file: version 6, mode culled, 1 s" % what)
    check(fi["version"] == 8 and fi["record_mode"] == 0 and fi["tick_order"] == 1,
          "%s: full file: version 8, mode full, tick order" % what)
    for info, rows, kind in ((fi, frows, "full"), (ci, crows, "culled")):
        bad = [r for r in rows if r[3] != r[4]]
        check(info["finalized"] == 1 and not bad and info["end_dropped"] == 0,
              "%s: %s: replayed counters == FINAL for every trace %s" % (what, kind, bad[:2]))
    fs, cs = by_site(frows), by_site(crows)
    check(fs == cs and len(fs) >= 1, "%s: per site, culled == full to the byte: %s / %s"
          % (what, fs, cs))
    return fi, ci


# 1. The same deterministic run, full and culled.
full = record("mix_full", ["mix"])
culled = record("mix_culled", ["mix"], **CULL)
fi, ci = same_end(full, culled, "mix")
check(ci["culled_blocks"] > 5 * ci["allocs"],
      "most blocks culled (%d culled, %d allocations written)" % (ci["culled_blocks"], ci["allocs"]))
check(os.path.getsize(culled) * 3 < os.path.getsize(full),
      "culled file much smaller (%d vs %d bytes)" % (os.path.getsize(culled), os.path.getsize(full)))

# 2. Just under and just over the threshold.
edge = record("edge", ["edge"], **CULL)
ex = extras(edge)
check(ex.get("site_under") == (0, 0, 1), "a block living 0.6 s is culled: %s" % (ex.get("site_under"),))
check(ex.get("site_over") == (1, 1, 0),
      "a block living 1.6 s is written, allocation and free: %s" % (ex.get("site_over"),))

# 3. The young-block buffer overflowing: written early, counted, still exact.
full = record("many_full", ["many", "200"])
small = record("many_small", ["many", "200"], MEMTOP_CULL_BLOCKS="16", **CULL)
big = record("many_big", ["many", "200"], **CULL)
_, si = same_end(full, small, "bounded at 16")
check(si["written_early"] > 0, "young blocks written early when the buffer is full (%d)"
      % si["written_early"])
_, bi = same_end(full, big, "default bound")
check(bi["written_early"] == 0 and bi["culled_blocks"] > 0,
      "none written early under the default bound (%d culled)" % bi["culled_blocks"])

# 4. SIGKILL.
killed = os.path.join(a.workdir, "killed.dat")
t = subprocess.Popen([prog, "forever"], env=env(a, MEMTOP_RECORD=killed, **CULL))
time.sleep(3.5)
t.send_signal(signal.SIGKILL)
t.wait(timeout=30)
ki, krows, _ = dump(a, killed, traces=True)
check(ki["finalized"] == 0 and ki["culled_blocks"] > 0 and ki["bad_trace_refs"] == 0,
      "the killed culled recording decodes up to its last frame (%d culled)" % ki["culled_blocks"])
r = subprocess.run([a.memtop, "-f", killed, "--batch"], capture_output=True, text=True,
                   timeout=60)
check(r.returncode == 0 and "not finalized" in r.stdout + r.stderr,
      "memtop opens it: %s" % (r.stdout + r.stderr)[:300])

# 5. The viewer says what a culled recording is.
r = subprocess.run([a.memtop, "-f", culled, "--batch"], capture_output=True, text=True,
                   timeout=60)
check(r.returncode == 0 and "culled recording: " in r.stdout and "freed within 1 s" in r.stdout,
      "memtop -f says culled and the threshold: %s" % r.stdout[:400])

# 6. memtop -p PID --record FILE --cull=1: a culled recording over the control channel.
t = subprocess.Popen([prog, "forever"], env=env(a))
time.sleep(1.0)
viaf = os.path.join(a.workdir, "via_ctl.dat")
rc, out, errs = record_attached(a, t.pid, viaf, ["--cull=1"], seconds=3.0)
t.kill()
t.wait()
check(rc == 0, "memtop -p --record --cull=1 ran: %s %s" % (out, errs))
vi, vrows, _ = dump(a, viaf, traces=True)
bad = [r for r in vrows if r[3] != r[4]]
check(vi["version"] == 6 and vi["record_mode"] == 1 and vi["cull_ms"] == 1000 and
      vi["culled_blocks"] > 0 and vi["finalized"] == 1 and not bad,
      "a mid-run culled recording: version 6, 1 s, replay == FINAL (%d culled) %s"
      % (vi["culled_blocks"], bad[:2]))

# 7. The export says culled, and is inexact before the end (live misses young blocks).
import json  # noqa: E402

mid = os.path.join(a.workdir, "mid.json")
r = subprocess.run([a.memtop, "-f", culled, "--at", "1.5", "--export", mid, "--strict"],
                   capture_output=True, text=True, timeout=60)
rec = json.load(open(mid))["recording"]
check(r.returncode == 3 and rec["cull_s"] == 1.0,
      "--export at 1.5 s: cull_s 1, --strict says inexact (rc %d)" % r.returncode)
end = os.path.join(a.workdir, "end.json")
r = subprocess.run([a.memtop, "-f", culled, "--export", end, "--strict"],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and json.load(open(end))["recording"]["cull_s"] == 1.0,
      "--export at the end of the finalized culled recording: exact (rc %d %s)"
      % (r.returncode, r.stderr[-200:]))
r = subprocess.run([a.memtop, "-f", full, "--export", end], capture_output=True, text=True,
                   timeout=60)
check(r.returncode == 0 and json.load(open(end))["recording"]["cull_s"] is None,
      "a full recording's export: cull_s null")
