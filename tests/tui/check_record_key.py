"""check_record_key.py -- `r` records the target, and the recording's end state
is the live end state to the byte.

`memtop -- memtop-exact GROUND.json` with MEMTOP_EXACT_DELAY_MS (the workload
sleeps before its work) and MEMTOP_TEMP_MS=0.  Asserts:
  - before `r` the header's recording row says "Rec off"; after `r`, while
    the target still RUNS, it shows "● REC <path> <size>" and the status line
    "recording: <path>"; the file is memtop-PID-YYYYmmdd-HHMMSS.dat in
    memtop's working directory, mode 0600;
  - `r` came before the work: half a second into the recording, no site_*
    trace of memtop-exact has any allocation (`memtop -f --at 0.5`);
  - the target runs to its exit: the header says EXITED and "recorded <path>
    (N B)" with N the file's size (the recording was finalized at exit);
  - `e` in the EXITED screen exports the final live state; `memtop -f DAT
    --export end.json` has exactly the same traces (matched by their frames),
    and for each, equal alloc/free/live counts and bytes, temporary count and
    bytes and peak; equal totals and health; state "exited" in both;
  - both equal memtop-exact's own ground truth per site_* function;
  - q: memtop exits with PROG's status, 0.
"""
import os
import re

import tuilib
from tuilib import check, frame, header_line

DELAY_MS = 5000  # the workload's sleep before its work: time to press r
WIDTH = 200  # the recording row holds a long path
FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
          "temporary_count", "temporary_bytes", "peak_live_bytes"]
TOTALS = FIELDS + ["unknown_free_count", "trace_count"]
GROUND = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
          "temporary_count", "temporary_bytes"]


def by_frames(snap, what):
    out = {}
    for tr in snap["traces"]:
        key = tuilib.frames_key(tr)
        check(key not in out, "%s: two traces with the same frames: %r" % (what, key[:2]))
        out[key] = tr
    return out


def compare_end_states(live, end):
    lt, et = by_frames(live, "live export"), by_frames(end, "replay export")
    only_live = [lt[k]["location"] for k in lt if k not in et]
    only_end = [et[k]["location"] for k in et if k not in lt]
    check(not only_live and not only_end,
          "different traces: only in the live export %s, only in the replay %s" %
          (only_live[:5], only_end[:5]))
    diffs = ["%s.%s: live %r, replay %r" % (lt[k]["location"], f, lt[k][f], et[k][f])
             for k in lt for f in FIELDS if lt[k][f] != et[k][f]]
    check(not diffs, "%d per-trace counters differ between the live export and the "
          "recording's end:\n  %s" % (len(diffs), "\n  ".join(diffs[:10])))
    diffs = ["%s: live %r, replay %r" % (f, live["totals"][f], end["totals"][f])
             for f in TOTALS if live["totals"][f] != end["totals"][f]]
    check(not diffs, "totals differ: " + "; ".join(diffs))
    check(live["health"] == end["health"],
          "health differs: live %r, replay %r" % (live["health"], end["health"]))
    check(live["state"] == "exited" and end["state"] == "exited",
          "state: live %r, replay %r, expected exited" % (live["state"], end["state"]))
    print("%d traces, live %d B in %d blocks, %d allocations: equal" %
          (len(lt), end["totals"]["live_bytes"], end["totals"]["live_count"],
           end["totals"]["alloc_count"]))


def by_site(snap):
    """Counters summed per site_* function of frames[0]."""
    sites = {}
    for tr in snap["traces"]:
        fn = tr["frames"][0].get("function") if tr["frames"] else None
        if fn and fn.startswith("site_"):
            s = sites.setdefault(fn, dict.fromkeys(GROUND, 0))
            for k in GROUND:
                s[k] += tr[k]
    return sites


def compare_ground(snap, ground, what):
    got = by_site(snap)
    bad = ["%s.%s: %s %d, truth %d" % (name, k, what, got.get(name, {}).get(k, 0), want[k])
           for name, want in ground["sites"].items() for k in GROUND
           if got.get(name, {}).get(k, 0) != want[k]]
    check(not bad, "%s departs from memtop-exact's ground truth:\n  %s" %
          (what, "\n  ".join(bad[:10])))


def test(t):
    check(t.args.exact, "--exact (memtop-exact) is required")
    exact = os.path.abspath(t.args.exact)
    ground_path = t.path("ground.json")
    t.start([t.memtop, "--", exact, ground_path], width=WIDTH,
            MEMTOP_EXACT_DELAY_MS=DELAY_MS, MEMTOP_TEMP_MS=0)
    shown, dat = t.record_key("r")
    screen = t.screen()
    check("RUNNING" in header_line(screen, 0),
          "REC showed only after the target's exit (delay too short?):\n" + frame(screen))
    bar = screen.rstrip("\n").split("\n")[-1]
    check("F8Record" in bar, "a live target's function bar lacks F8 Record:\n%s" % bar)
    check("recording: %s" % shown in screen,
          "the status line does not say 'recording: %s':\n%s" % (shown, frame(screen)))

    # The target's work and exit: the recording is finalized then.
    done_re = re.compile(r"recorded (\S+\.dat) \((\d+) B\)")
    m = t.wait_for(lambda s: "EXITED" in header_line(s, 0) and done_re.search(header_line(s, 3)),
                   "EXITED and 'recorded <path> (N B)' in the header",
                   timeout=DELAY_MS / 1000 + 30)
    check(os.path.normpath(os.path.join(t.workdir, m.group(1))) == dat,
          "the header names another file after the exit: %s" % m.group(1))
    check(int(m.group(2)) == os.path.getsize(dat),
          "the header says %s B, the file has %d" % (m.group(2), os.path.getsize(dat)))

    live_path, live = t.export_key(set())
    print("live export: %s" % live_path)
    ground = tuilib.e2elib.load_json(ground_path)

    end_path = t.path("end.json")
    rc, _, err = t.run_memtop(["-f", dat, "--export", end_path])
    check(rc == 0, "memtop -f %s --export end.json exited %d: %s" % (dat, rc, err.strip()))
    end = tuilib.e2elib.load_json(end_path)
    compare_end_states(live, end)
    compare_ground(live, ground, "the live export")
    compare_ground(end, ground, "the recording's end")

    # r was pressed during the sleep: early in the recording, no site has run.
    early_path = t.path("early.json")
    rc, _, err = t.run_memtop(["-f", dat, "--export", early_path, "--at", "0.5"])
    check(rc == 0, "memtop -f --export --at 0.5 exited %d: %s" % (rc, err.strip()))
    early = by_site(tuilib.e2elib.load_json(early_path))
    busy = [n for n, c in early.items() if c["alloc_count"]]
    check(not busy, "0.5 s into the recording the work had already run (%s): r came too "
          "late" % busy)

    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop exited %d after memtop-exact exited 0" % rc)


tuilib.main(test, __doc__)
