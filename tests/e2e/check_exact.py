#!/usr/bin/env python3
"""check_exact.py -- memtop's counters must match memtop-exact's ground truth to the byte.

Why it exists: exact per-backtrace counters are memtop's core promise.  This
runs `memtop --export OUT.json -- memtop-exact GROUND.json CODE`, maps each
trace to a site function of memtop-exact by its innermost frame
(frames[0].offset against `nm -S` symbol ranges), sums the traces of each
site, and compares every counter with the ground truth the workload wrote.
It does so twice: with MEMTOP_TEMP_MS=0 (only "malloc immediately followed by
free" is temporary) and with MEMTOP_TEMP_MS at its maximum, longer than the
run (every free() is temporary, a realloc's free half never is).  It also
checks the snapshot's shape and invariants: totals are the sums over traces,
live = alloc - free per trace, no unknown frees, every trace that counted
something has a frame, the snapshot is the exit-time one, memtop exits with
the workload's status and leaves no segment behind.
"""

import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check, fail  # noqa: E402

EXIT_CODE = 5
# (name, MEMTOP_TEMP_MS, suffix of the ground truth's temporary_* fields)
RUNS = [("temp0", 0, ""), ("templong", 86400000, "_long_threshold")]
SITE_FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count",
               "live_bytes", "temporary_count", "temporary_bytes"]
SUM_FIELDS = ["live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count",
              "free_bytes", "temporary_count", "temporary_bytes"]


def function_symbols(binary):
    """[(start, end, name)] of the functions defined in binary, from nm -S."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in ("t", "T"):
            start, size = int(parts[0], 16), int(parts[1], 16)
            syms.append((start, start + size, parts[3]))
    check(syms, "nm found no function symbols in %s" % binary)
    return syms


def symbol_at(syms, offset):
    for start, end, name in syms:
        if start <= offset < end:
            return name
    return None


def frame_in_exe(frame, exe_real):
    """The ELF offset of frame if it lies in the workload binary, else None."""
    module, offset = frame.get("module"), frame.get("offset")
    if not isinstance(module, str) or not e2elib.is_hex(offset):
        return None
    if os.path.realpath(module) != exe_real:
        return None
    return int(offset, 16)


def run_workload(ctx, args, name, temp_ms):
    out, ground = ctx.path(name + ".out.json"), ctx.path(name + ".ground.json")
    cmd = [args.memtop, "--export", out, "--", args.exact, ground, str(EXIT_CODE)]
    proc = e2elib.run(cmd, ctx.env_with(MEMTOP_TEMP_MS=temp_ms))
    check(proc.returncode == EXIT_CODE,
          "memtop exited %s, the workload exits %d: %s\n%s" %
          (proc.returncode, EXIT_CODE, e2elib.show_cmd(cmd), e2elib.describe(proc)))
    check(not ctx.segments(), "segments left in MEMTOP_SHM_DIR after memtop --export: %s" %
          ctx.segments())
    return e2elib.load_json(out), e2elib.load_json(ground)


def check_invariants(snap, exe_real, final=True):
    """final: the snapshot must be the exit-time one (else a live one)."""
    errs = []
    if final and snap["exited"] is not True:
        errs.append("exited is %r: the exported snapshot is not the exit-time one" %
                    snap["exited"])
    if os.path.realpath(snap["exe"]) != exe_real:
        errs.append("exe is %r, expected %r" % (snap["exe"], exe_real))
    totals, traces = snap["totals"], snap["traces"]
    for field in SUM_FIELDS:
        if field not in totals or not all(field in t for t in traces):
            continue  # temporary_bytes is optional in the documented shape
        s = sum(t[field] for t in traces)
        if totals[field] != s:
            errs.append("totals.%s = %d but the traces sum to %d (diff %+d)" %
                        (field, totals[field], s, totals[field] - s))
    if totals["unknown_free_count"] != 0:
        errs.append("totals.unknown_free_count = %d, expected 0" % totals["unknown_free_count"])
    if totals["peak_live_bytes"] < totals["live_bytes"]:
        errs.append("totals.peak_live_bytes %d < live_bytes %d" %
                    (totals["peak_live_bytes"], totals["live_bytes"]))
    for t in traces:
        if t["live_count"] != t["alloc_count"] - t["free_count"]:
            errs.append("trace %d: live_count %d != alloc_count %d - free_count %d" %
                        (t["id"], t["live_count"], t["alloc_count"], t["free_count"]))
        if t["live_bytes"] != t["alloc_bytes"] - t["free_bytes"]:
            errs.append("trace %d: live_bytes %d != alloc_bytes %d - free_bytes %d" %
                        (t["id"], t["live_bytes"], t["alloc_bytes"], t["free_bytes"]))
        if t["peak_live_bytes"] < t["live_bytes"]:
            errs.append("trace %d: peak_live_bytes %d < live_bytes %d" %
                        (t["id"], t["peak_live_bytes"], t["live_bytes"]))
        # The preload reserves trace 0 for allocations whose backtrace could
        # not be stored (table full); it may be published empty.  Any trace
        # that counted something must have frames: this program never fills
        # the table.
        if not t["frames"] and any(t[f] for f in SUM_FIELDS if f in t):
            errs.append("trace %d has counters but no frames" % t["id"])
    ids = [t["id"] for t in traces]
    if len(set(ids)) != len(ids):
        errs.append("trace ids are not unique")
    return errs


def group_by_site(snap, syms, sites, exe_real):
    """{site: [trace, ...]} by frames[0]; errors for frames in no site."""
    groups, errs = {s: [] for s in sites}, []
    for t in snap["traces"]:
        if not t["frames"]:
            continue
        off = frame_in_exe(t["frames"][0], exe_real)
        if off is None:
            continue  # an allocation made by a library (stdio, pthread, ...)
        name = symbol_at(syms, off)
        if name not in groups:
            errs.append("trace %d: frames[0] is at %s+0x%x, in %s, which is no site function"
                        " (memtop-exact allocates only from site_* functions)" %
                        (t["id"], exe_real, off, name or "no symbol"))
            continue
        groups[name].append(t)
    return groups, errs


def site_diff(site, expect, traces, temp_suffix):
    rows = []
    for field in SITE_FIELDS:
        if field == "temporary_bytes" and not all(field in t for t in traces):
            continue
        want = expect[field + temp_suffix if field.startswith("temporary_") else field]
        got = sum(t[field] for t in traces)
        if got != want:
            rows.append((site, field, want, got))
    return rows


def describe_traces(traces, syms, exe_real):
    lines = []
    for t in traces:
        where = []
        for fr in t["frames"][:4]:
            off = frame_in_exe(fr, exe_real)
            where.append(symbol_at(syms, off) or hex(off) if off is not None else
                         "%s+%s" % (os.path.basename(str(fr.get("module"))), fr.get("offset")))
        lines.append("      trace %d: alloc %d/%dB free %d/%dB live %d/%dB temp %d  via %s" %
                     (t["id"], t["alloc_count"], t["alloc_bytes"], t["free_count"],
                      t["free_bytes"], t["live_count"], t["live_bytes"], t["temporary_count"],
                      " <- ".join(where)))
    return lines


def compare_sites(groups, truth, syms, exe_real, temp_suffix):
    rows, detail = [], []
    for site, expect in truth["sites"].items():
        diff = site_diff(site, expect, groups[site], temp_suffix)
        rows.extend(diff)
        if diff:
            detail.append("    %s (%d traces):" % (site, len(groups[site])))
            detail.extend(describe_traces(groups[site], syms, exe_real))
    if not rows:
        return []
    table = ["%-28s %-16s %12s %12s %10s" % ("site", "field", "expected", "memtop", "diff")]
    for site, field, exp, got in rows:
        table.append("%-28s %-16s %12d %12d %+10d" % (site, field, exp, got, got - exp))
    return ["counter mismatches:"] + table + ["  traces of the mismatching sites:"] + detail


def check_paths(groups, syms, exe_real):
    """site_malloc is reached from three callers: each must be its own trace."""
    callers = set()
    for t in groups["site_malloc"]:
        if len(t["frames"]) > 1:
            off = frame_in_exe(t["frames"][1], exe_real)
            callers.add(symbol_at(syms, off) if off is not None else None)
    want = {"path_a", "path_b", "phase_malloc"}
    if callers != want:
        return ["site_malloc traces have callers (frames[1]) %s, expected %s" %
                (sorted(str(c) for c in callers), sorted(want))]
    return []


def compare(args, snap, truth, temp_suffix, final=True):
    """Every way snap (memtop's JSON export of memtop-exact) departs from
    truth (its ground truth), and the number of traces matched."""
    exe_real = os.path.realpath(args.exact)
    shape = e2elib.snapshot_shape_errors(snap)
    check(not shape, "the snapshot does not have the documented shape:\n  " + "\n  ".join(shape))
    syms = function_symbols(args.exact)
    names = {name for _, _, name in syms}
    missing = [s for s in truth["sites"] if s not in names]
    check(not missing, "site functions missing from nm output: %s" % missing)
    errs = check_invariants(snap, exe_real, final)
    groups, map_errs = group_by_site(snap, syms, truth["sites"], exe_real)
    errs += map_errs
    errs += compare_sites(groups, truth, syms, exe_real, temp_suffix)
    errs += check_paths(groups, syms, exe_real)
    return errs, sum(len(g) for g in groups.values())


def check_run(ctx, args, name, temp_ms, temp_suffix):
    snap, truth = run_workload(ctx, args, name, temp_ms)
    errs, matched = compare(args, snap, truth, temp_suffix)
    if errs:
        fail("with MEMTOP_TEMP_MS=%d, memtop's snapshot %s disagrees with the ground truth %s:"
             "\n%s" % (temp_ms, ctx.path(name + ".out.json"), ctx.path(name + ".ground.json"),
                       "\n".join(errs)))
    print("MEMTOP_TEMP_MS=%d: %d sites, %d traces matched to the byte" %
          (temp_ms, len(truth["sites"]), matched))


def test(args):
    ctx = e2elib.Ctx(args)
    failures = []
    for name, temp_ms, suffix in RUNS:
        try:
            check_run(ctx, args, name, temp_ms, suffix)
        except e2elib.TestFailure as e:
            failures.append(str(e))
    if failures:
        fail("\n\n".join(failures))


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
