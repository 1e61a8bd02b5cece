#!/usr/bin/env python3
"""check_overflow.py -- trace overflow with exact totals.

Why it exists: with more distinct backtraces than memtop keeps, the totals
once summed only the published traces (25.8M allocations shown against ~90M
made, 1,073 live blocks against 4,096), and a full trace table cost 1.47 GB
of tracker memory for a 1 MB heap (security issue 10, part 6).  Now the
trace table is bounded (MEMTOP_MAX_TRACES), backtraces beyond it and traces
the segment has no room for are counted in the overflow trace (id 0), and
the totals come from every trace the target holds.

memtop-many-stacks makes N allocations with N distinct backtraces, keeps
LIVE of them live, and writes the ground truth of the totals.  This runs it
under `memtop --export` and checks:
  - bounded table (MEMTOP_MAX_TRACES=1024, 20,000 stacks): totals equal the
    ground truth to the byte; the traces sum to the totals; at most 1,024
    traces; the overflow trace holds the blocks of every backtrace beyond
    the bound; the JSON health says the table is full, with its bound, and
    so does the text export's health line; tracker memory does not grow
    with the number of distinct stacks (80,000 stacks cost what 20,000 do);
  - a recording of the same run (MEMTOP_RECORD), exported with -f: the same
    exact totals, traces that sum to them, trace_table_full derived from
    the overflow trace;
  - --top: the JSON and CSV exports keep the top rows, say how many there
    were, and fold the rest into one "(other)" row: the rows still sum to
    the totals;
  - segment full (MEMTOP_SHM_DIR on a 3 MiB tmpfs, when this runs as root
    and may mount one): the traces without room are folded into the
    overflow trace, dropped_traces says how many, and totals and sums stay
    exact.
"""

import csv
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check, fail  # noqa: E402

MAX_TRACES = 1024
STACKS = 20000
MORE_STACKS = 80000
LIVE = 4096
TOP = 10
# What 60,000 more distinct stacks may add to tracker_bytes once the table
# is full: nothing per stack; the slack covers page-granular accounting.
# Without the bound they cost ~0.4 KiB each: ~24 MiB.
TRACKER_SLACK = 1 << 20
TRUTH = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes"]
SUMS = TRUTH + ["temporary_count", "temporary_bytes"]


def run_export(ctx, name, stacks, out_ext=".json", extra=(), **env):
    out, ground = ctx.path(name + out_ext), ctx.path(name + ".ground.json")
    cmd = [ctx.args.memtop, "--export", out] + list(extra) + \
        ["--", ctx.args.many_stacks, ground, str(stacks), str(LIVE)]
    proc = e2elib.run(cmd, ctx.env_with(**env))
    check(proc.returncode == 0, "memtop failed: %s\n%s" % (e2elib.show_cmd(cmd),
                                                           e2elib.describe(proc)))
    return out, e2elib.load_json(ground)


def sums_errors(rows, totals, what, keys=SUMS):
    errs = []
    for k in keys:
        s = sum(int(r[k]) for r in rows)
        if s != totals[k]:
            errs.append("%s: the rows' %s sum to %d, totals.%s is %d" % (what, k, s, k,
                                                                         totals[k]))
    return errs


def exact_errors(snap, truth, what):
    errs = e2elib.snapshot_shape_errors(snap)
    totals = snap["totals"]
    for k in TRUTH:
        if totals.get(k) != truth[k]:
            errs.append("%s: totals.%s = %r, the workload made %d" % (what, k, totals.get(k),
                                                                      truth[k]))
    errs += sums_errors(snap["traces"], totals, what)
    h = snap.get("health", {})
    for k in ("unknown_free_count", "untracked_alloc_count", "missed_free_count"):
        if h.get(k) != 0:
            errs.append("%s: health.%s = %r" % (what, k, h.get(k)))
    return errs


def overflow_of(snap):
    rows = [t for t in snap["traces"] if t["id"] == 0]
    return rows[0] if rows else None


def check_bounded(ctx):
    out, truth = run_export(ctx, "bounded", STACKS, MEMTOP_MAX_TRACES=MAX_TRACES)
    snap = e2elib.load_json(out)
    errs = exact_errors(snap, truth, "MEMTOP_MAX_TRACES=%d" % MAX_TRACES)
    totals, health = snap["totals"], snap.get("health", {})
    if totals["trace_count"] > MAX_TRACES or len(snap["traces"]) > MAX_TRACES:
        errs.append("%d traces (trace_count %d) with MEMTOP_MAX_TRACES=%d" %
                    (len(snap["traces"]), totals["trace_count"], MAX_TRACES))
    over = overflow_of(snap)
    if not over or over["alloc_count"] < STACKS - MAX_TRACES:
        errs.append("the overflow trace holds %r allocations; the %d stacks beyond the bound "
                    "made %d" % (over and over["alloc_count"], STACKS - MAX_TRACES,
                                 STACKS - MAX_TRACES))
    elif over.get("location") != "(overflow)":
        errs.append("the overflow trace's location is %r" % over.get("location"))
    max_traces = snap.get("settings", {}).get("max_traces")
    if health.get("trace_table_full") is not True or max_traces != MAX_TRACES:
        errs.append("health says trace_table_full %r, settings.max_traces is %r" %
                    (health.get("trace_table_full"), max_traces))
    if errs:
        fail("%s:\n%s" % (out, "\n".join(errs)))

    out2, truth2 = run_export(ctx, "bounded-more", MORE_STACKS, MEMTOP_MAX_TRACES=MAX_TRACES)
    snap2 = e2elib.load_json(out2)
    errs = exact_errors(snap2, truth2, "%d stacks" % MORE_STACKS)
    grew = snap2["totals"]["tracker_bytes"] - totals["tracker_bytes"]
    if grew > TRACKER_SLACK:
        errs.append("tracker_bytes grew by %d bytes (%d -> %d) from %d to %d distinct stacks "
                    "under MEMTOP_MAX_TRACES=%d" % (grew, totals["tracker_bytes"],
                                                    snap2["totals"]["tracker_bytes"], STACKS,
                                                    MORE_STACKS, MAX_TRACES))
    if errs:
        fail("%s:\n%s" % (out2, "\n".join(errs)))

    txt, _ = run_export(ctx, "bounded-text", STACKS, ".txt", MEMTOP_MAX_TRACES=MAX_TRACES)
    with open(txt, encoding="utf-8") as f:
        health_lines = [line for line in f if line.startswith("health:")]
    check(health_lines and "trace table full (1024 traces, MEMTOP_MAX_TRACES)" in
          health_lines[0], "the text export's health line does not say the trace table is "
          "full: %r" % health_lines)
    print("bounded: totals exact, %d traces, overflow %d allocations, tracker %d -> %d bytes" %
          (len(snap["traces"]), over["alloc_count"], totals["tracker_bytes"],
           snap2["totals"]["tracker_bytes"]))


def check_recording(ctx):
    dat, ground = ctx.path("rec.dat"), ctx.path("rec.ground.json")
    cmd = [ctx.args.many_stacks, ground, str(STACKS), str(LIVE)]
    proc = e2elib.run(cmd, ctx.env_with(LD_PRELOAD=ctx.args.preload, MEMTOP_RECORD=dat,
                                        MEMTOP_MAX_TRACES=MAX_TRACES))
    check(proc.returncode == 0, "recording failed: %s\n%s" % (e2elib.show_cmd(cmd),
                                                              e2elib.describe(proc)))
    out = ctx.path("rec.json")
    cmd = [ctx.args.memtop, "-f", dat, "--export", out]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, "%s\n%s" % (e2elib.show_cmd(cmd), e2elib.describe(proc)))
    snap, truth = e2elib.load_json(out), e2elib.load_json(ground)
    errs = exact_errors(snap, truth, "recording")
    if snap.get("health", {}).get("trace_table_full") is not True:
        errs.append("the recording's health does not say the trace table was full: %r" %
                    snap.get("health"))
    # a recording does not store the bound: never "(0 traces)"
    why = snap.get("health", {}).get("not_exact") or ""
    if "trace table full" not in why or "(0 traces)" in why:
        errs.append("the recording's not_exact does not say the table was full, or says it "
                    "held 0 traces: %r" % why)
    if errs:
        fail("%s:\n%s" % (out, "\n".join(errs)))
    print("recording: totals exact, %d traces" % len(snap["traces"]))


def check_top(ctx):
    out, truth = run_export(ctx, "top", STACKS, extra=["--top", str(TOP)],
                            MEMTOP_MAX_TRACES=MAX_TRACES)
    snap = e2elib.load_json(out)
    errs = exact_errors(snap, truth, "--top %d" % TOP)
    traces = snap["traces"]
    other = [t for t in traces if t.get("id") is None]
    if snap.get("traces_exported") != TOP or len(traces) != TOP + 1 or len(other) != 1:
        errs.append("--top %d: traces_exported %r, %d rows, %d (other) rows" %
                    (TOP, snap.get("traces_exported"), len(traces), len(other)))
    elif snap.get("traces_total") != TOP + other[0].get("other_traces", -1):
        errs.append("traces_total %r != %d exported + %r folded" %
                    (snap.get("traces_total"), TOP, other[0].get("other_traces")))
    csv_out, _ = run_export(ctx, "top-csv", STACKS, ".csv", ["--top", str(TOP)],
                            MEMTOP_MAX_TRACES=MAX_TRACES)
    with open(csv_out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != TOP + 1 or rows[-1]["id"] != "" or \
            not rows[-1]["location"].startswith("(other: "):
        errs.append("CSV --top %d: %d rows, last %r" % (TOP, len(rows), rows[-1:]))
    # Another run of the same workload: its counts and bytes are the same
    # (temporaries depend on timing: MEMTOP_TEMP_MS).
    errs += sums_errors(rows, snap["totals"], "CSV --top", TRUTH)
    if errs:
        fail("%s:\n%s" % (out, "\n".join(errs)))
    print("--top %d: %d of %d traces, the rest in (other)" % (TOP, TOP, snap["traces_total"]))


def mount_small_tmpfs(path):
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", path],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def check_segment_full(ctx):
    small = ctx.path("small-shm")
    if not mount_small_tmpfs(small):
        print("segment full: skipped (cannot mount a small tmpfs: not root, or no "
              "CAP_SYS_ADMIN)")
        return
    try:
        out, truth = run_export(ctx, "segfull", STACKS, MEMTOP_SHM_DIR=small)
    finally:
        subprocess.run(["umount", small])
    snap = e2elib.load_json(out)
    errs = exact_errors(snap, truth, "segment full")
    if snap.get("segment_full") is not True or not snap["health"].get("dropped_traces"):
        errs.append("segment_full %r, dropped_traces %r: the 3 MiB segment cannot hold %d "
                    "traces" % (snap.get("segment_full"), snap["health"].get("dropped_traces"),
                                STACKS))
    over = overflow_of(snap)
    if not over or over["alloc_count"] < snap["health"].get("dropped_traces", 0):
        errs.append("the overflow trace (%r allocations) does not hold the %r folded traces" %
                    (over and over["alloc_count"], snap["health"].get("dropped_traces")))
    if errs:
        fail("%s:\n%s" % (out, "\n".join(errs)))
    print("segment full: totals exact, %d traces folded into the overflow trace" %
          snap["health"]["dropped_traces"])


def test(args):
    check(args.many_stacks, "--many-stacks is required")
    ctx = e2elib.Ctx(args)
    check_bounded(ctx)
    check_recording(ctx)
    check_top(ctx)
    check_segment_full(ctx)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
