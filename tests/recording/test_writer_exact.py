"""test_writer_exact.py -- MEMTOP_RECORD from process start on memtop-exact
(the exact-counters workload, every hooked function, 4 threads).  The
recording's events, grouped by the function of each trace's innermost
frame, must equal the workload's own ground truth for every site (counts,
bytes, temporaries), the replayed counters must equal the FINAL state for
every trace, and the event counts must add up (END, ground truth).
Also: %p expands to the pid, the file is 0600, the exit code is kept.
All of it in each MEMTOP_RECORD_ORDER: unset and "tick" (version 8, tick
order), "thread" (version 6, thread order), and a bad value (a warning,
tick order)."""
import json
import os
import subprocess

from test_writer_common import args, check, dump, env, fail, functions, mode_ok, name_of

a = args()
top = a.workdir


def one(order):
    a.workdir = os.path.join(top, order or "unset")
    os.makedirs(a.workdir)
    extra = {"MEMTOP_RECORD_ORDER": order} if order is not None else {}
    ground_path = os.path.join(a.workdir, "ground.json")
    pattern = os.path.join(a.workdir, "exact-%p-%e.dat")
    p = subprocess.run([a.exact, ground_path, "3"], timeout=120, capture_output=True, text=True,
                       env=env(a, MEMTOP_RECORD=pattern, MEMTOP_TEMP_MS=0, **extra))
    ticks = order != "thread"
    warned = "MEMTOP_RECORD_ORDER=" in p.stderr
    check(warned == (order == "bogus"), "%s: a warning only for a bad value" % order)
    check(p.returncode == 3, "exit code kept under recording")
    ground = json.load(open(ground_path))
    files = [f for f in os.listdir(a.workdir) if f.endswith(".dat")]
    check(len(files) == 1 and files[0].startswith("exact-") and
          files[0].endswith("-memtop-exact.dat"), "one file named by the pattern: %s" % files)
    rec = os.path.join(a.workdir, files[0])
    pid = int(files[0].split("-")[1])
    check(mode_ok(rec), "mode 0600")
    info, rows, _ = dump(a, rec, traces=True)
    check(info["pid"] == pid, "%p is the pid recorded in PROCESS")
    check(info["finalized"] == 1 and info["end_reason"] == 2, "finalized at exit")
    check(info["process_flags"] == 0 and info.get("records_7", 0) == 1,
          "from start: no initial state")
    check(info["end_dropped"] == 0 and info["lost_alloc"] == 0 and info["lost_free"] == 0,
          "no dropped events")
    check(info["end_events"] == info["allocs"] + info["frees"], "END counts every event")
    bad = [r for r in rows if r[3] != r[4]]
    check(not bad, "replayed counters == FINAL state for every trace %s" % bad[:3])

    funcs = functions(a.exact)
    sites = {}
    for tid, mod, off, replay, final in rows:
        if os.path.realpath(mod) != os.path.realpath(a.exact):
            continue
        name = name_of(funcs, off)
        if name is None or not name.startswith("site_"):
            continue
        s = sites.setdefault(name, [0] * 6)
        for i in range(6):
            s[i] += replay[i]
    keys = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "temporary_count",
            "temporary_bytes"]
    mismatch = []
    for name, want in ground["sites"].items():
        got = sites.get(name, [0] * 6)
        for i, k in enumerate(keys):
            if got[i] != want[k]:
                mismatch.append("%s.%s: recorded %d, truth %d" % (name, k, got[i], want[k]))
    check(not mismatch, "every site matches the ground truth (%d sites) %s"
          % (len(ground["sites"]), mismatch[:5]))
    extra = set(sites) - set(ground["sites"])
    check(not extra, "no unexpected site %s" % extra)
    total_allocs = sum(v["alloc_count"] for v in ground["sites"].values())
    site_allocs = sum(v[0] for v in sites.values())
    check(site_allocs == total_allocs and info["allocs"] >= total_allocs,
          "allocation events: %d from sites, %d in all" % (site_allocs, info["allocs"]))
    check(info["version"] == (8 if ticks else 6) and info["tick_order"] == (1 if ticks else 0),
          "%s: version %d, tick_order %d" % (order, info["version"], info["tick_order"]))


for order in (None, "tick", "thread", "bogus"):
    one(order)
