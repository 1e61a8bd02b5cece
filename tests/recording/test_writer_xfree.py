"""test_writer_xfree.py -- frees that name their block (EVENTS2) stay exact
when blocks are freed by another thread than the one that allocated them
and their addresses are reused at once by a third (writer_xfree.c, glibc's
tcache off, one arena): the recorder may write the new block at an address
before the free of the old one, and must then write that free in full.

Recorded from the start (MEMTOP_RECORD) and, in a second run, started
through the control channel half-way: `memtop -f FILE --export` must equal
the live export at exit for every per-trace counter and in the totals, the
debug decoder's replay must equal the FINAL state for every trace, nothing
may be dropped (a run that dropped events is repeated, up to 3 times), and
the writer's log must show frees that named their block and frees whose
address held another block by then (the race this test is about)."""
import json
import os
import re
import subprocess
import time

from test_writer_common import args, check, ctl, dump, fail

FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
          "temporary_count", "temporary_bytes", "peak_live_bytes"]
STEPS = 40000
a = args()
prog = os.path.join(a.progs, "writer_xfree")


def target_env(**extra):
    e = dict(os.environ)
    e.update({"MEMTOP_SHM_DIR": a.workdir, "MEMTOP_LOG": "info", "MALLOC_ARENA_MAX": "1",
              "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"})
    e.pop("MEMTOP_RECORD", None)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def block_stats(stderr):
    m = re.search(r"(\d+) frees named their block \((\d+) of them in the frame before\), (\d+) "
                  r"written in full; of the frees their own frame did not name, (\d+) found no "
                  r"block at the address, (\d+) another block there", stderr)
    return tuple(int(x) for x in m.groups()) if m else None


def from_start(n):
    rec, live = os.path.join(a.workdir, "start%d.dat" % n), os.path.join(a.workdir, "live%d.json" % n)
    p = subprocess.run([a.memtop, "--export", live, "--", prog, str(STEPS)], timeout=300,
                       env=target_env(MEMTOP_RECORD=rec), capture_output=True, text=True)
    return p.returncode, rec, live, p.stderr


def mid_run(n):
    rec, live = os.path.join(a.workdir, "mid%d.dat" % n), os.path.join(a.workdir, "livemid%d.json" % n)
    go = os.path.join(a.workdir, "go%d" % n)
    before = set(os.listdir(a.workdir))
    p = subprocess.Popen([a.memtop, "--export", live, "--", prog, str(STEPS), go],
                         env=target_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    segs = [f for f in set(os.listdir(a.workdir)) - before if f.startswith("memtop-")]
    if line.strip() != "ready" or len(segs) != 1:
        p.kill()
        fail("the target did not get ready (%r, segments %s)" % (line, segs))
    rc, out = ctl(a, int(segs[0].split("-")[1]), "start", rec)
    check(rc == 0, "a recording started through the control channel: %s" % out.get("msg"))
    time.sleep(0.2)
    open(go, "w").close()
    _, err = p.communicate(timeout=300)
    return p.returncode, rec, live, err


def one(kind, n):
    """(dropped, stats) of one run, after checking what does not depend on drops."""
    rc, rec, live, err = (from_start if kind == "start" else mid_run)(n)
    check(rc == 0, "%s: memtop -- writer_xfree exits 0 (%s)" % (kind, err.strip()[-300:]))
    info, rows, _ = dump(a, rec, traces=True)
    check(info["finalized"] == 1 and info["end_reason"] == 2, "%s: finalized at exit" % kind)
    check(info["ref_frees"] > 0 and info["full_frees"] > 0,
          "%s: frees naming their block (%d) and in full (%d)" % (kind, info["ref_frees"],
                                                                   info["full_frees"]))
    if info["end_dropped"]:
        print("note: %s: %d events dropped, run again" % (kind, info["end_dropped"]))
        return info["end_dropped"], None
    bad = [r for r in rows if r[3] != r[4]]
    check(not bad, "%s: replayed counters == FINAL state for all %d traces %s" % (kind, len(rows),
                                                                                  bad[:3]))
    end = os.path.join(a.workdir, "end-%s%d.json" % (kind, n))
    p = subprocess.run([a.memtop, "-f", rec, "--export", end], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0 and "differ" not in p.stderr,
          "%s: memtop -f reads it, no difference from the FINAL state (%s)" % (kind,
                                                                               p.stderr.strip()))
    lv, ev = json.load(open(live)), json.load(open(end))
    lt = {t["id"]: t for t in lv["traces"]}
    et = {t["id"]: t for t in ev["traces"]}
    diffs = [(i, f, lt[i][f], et.get(i, {}).get(f)) for i in lt for f in FIELDS
             if lt[i][f] != et.get(i, {}).get(f)]
    check(sorted(lt) == sorted(et) and not diffs,
          "%s: every per-trace counter equals the live export (%d traces) %s" % (kind, len(lt),
                                                                                diffs[:5]))
    tot = [k for k in FIELDS if lv["totals"][k] != ev["totals"][k]]
    check(not tot, "%s: the totals equal the live export %s" % (kind, tot))
    stats = block_stats(err)
    check(stats is not None, "%s: the writer logs what its frees named" % kind)
    return 0, stats


for kind in ("start", "mid"):
    for attempt in range(3):
        dropped, stats = one(kind, attempt)
        if not dropped:
            break
    else:
        fail("%s: events were dropped in 3 runs: no exact comparison possible" % kind)
    refs, prev, full, not_found, other = stats
    print("%s: %d frees named their block (%d in the frame before), %d in full (not named in "
          "their frame: %d no block at the address, %d another block there)" % (
              kind, refs, prev, full, not_found, other))
    check(refs > 0 and other > 0, "%s: the address-reuse race happened and was handled" % kind)
