#!/usr/bin/env python3
"""check_pprof.py -- `--export FILE.pb.gz|.pprof` equals the JSON export, per trace.

Why it exists: a pprof profile is only useful if it says what memtop says.
memtop-exact runs under `memtop --record r.dat --export live.pb.gz -- PROG`
(the -- PROG path); then the recording is exported with -f, at its end and
at --at, both as JSON and as pprof (.pprof and .pb.gz).  Each profile is
decoded by Debian's protoc (profile.proto of golang-github-google-pprof-dev)
and must equal its JSON to the byte: one sample per trace (label trace_id)
with inuse_space/inuse_objects/alloc_space/alloc_objects = live_bytes,
live_count, alloc_bytes, alloc_count; its locations, leaf first, are the
JSON's frames (one Location per address, one Line per named source frame,
inlined ones first), each Mapping names the frame's module with the
module's real build id (readelf); time and duration are the snapshot's; the
comments say "data: exact".  Then `go tool pprof -top` (Debian golang-go)
must show, for each sample type, the JSON's totals.
"""

import os
import re
import subprocess

import fleetlib
from fleetlib import check, e2elib

VALUE_KEYS = ["live_bytes", "live_count", "alloc_bytes", "alloc_count"]
TYPES = [("inuse_space", "bytes"), ("inuse_objects", "count"), ("alloc_space", "bytes"),
         ("alloc_objects", "count")]


def build_id(path, cache={}):
    """The GNU build id of an ELF file, as readelf -n prints it."""
    if path not in cache:
        out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]+)", out)
        cache[path] = m.group(1) if m else ""
    return cache[path]


def address_groups(frames):
    """JSON frames grouped by machine frame: [(address, [source frames])]."""
    groups = []
    for fr in frames:
        addr = int(fr["address"], 16)
        if not groups or groups[-1][0] != addr or not groups[-1][1][-1]["inlined"]:
            groups.append((addr, [fr]))
        else:
            groups[-1][1].append(fr)
    return groups


def check_location(prof, loc_id, addr, srcs, where):
    loc = prof.locations.get(loc_id)
    check(loc is not None, "%s: location %d is not in the profile" % (where, loc_id))
    check(loc["address"] == addr, "%s: location address 0x%x, JSON 0x%x" %
          (where, loc["address"], addr))
    want = [(f["function"], f["file"] or "", f["line"] or 0) for f in srcs if f["function"]]
    check(loc["lines"] == want, "%s at 0x%x: lines %r, JSON frames %r" %
          (where, addr, loc["lines"], want))
    module = srcs[0]["module"]
    if module is None:
        check(loc["mapping"] == 0, "%s: a frame of no module has mapping %d" % (where, loc["mapping"]))
        return
    m = prof.mappings.get(loc["mapping"])
    check(m is not None and m["file"] == module, "%s: mapping %r, JSON module %r" %
          (where, m, module))
    check(m["start"] <= addr < m["limit"], "%s: 0x%x outside its mapping %r" % (where, addr, m))
    if os.path.exists(module):
        check(m["build_id"] == build_id(module), "%s: build id %r, readelf says %r" %
              (where, m["build_id"], build_id(module)))


def compare(prof, snap, name):
    """The profile prof against the JSON snapshot snap, trace by trace."""
    check(prof.sample_types == TYPES, "%s: sample types %r" % (name, prof.sample_types))
    check(prof.default_type == "inuse_space", "%s: default type %r" % (name, prof.default_type))
    check(prof.time_nanos == round(float(snap["time_unix"]) * 1e9) or
          abs(prof.time_nanos - float(snap["time_unix"]) * 1e9) < 1000,
          "%s: time_nanos %d, JSON time_unix %s" % (name, prof.time_nanos, snap["time_unix"]))
    check(abs(prof.duration_nanos - float(snap["tracking_s"]) * 1e9) < 1000,
          "%s: duration_nanos %d, JSON tracking_s %s" % (name, prof.duration_nanos, snap["tracking_s"]))
    exact = snap["health"]["exact"]
    check(("data: exact (every allocation and free counted, not sampled)" in prof.comments) == exact,
          "%s: comments %r, JSON exact %r" % (name, prof.comments, exact))
    by_id = {s["labels"].get("trace_id"): s for s in prof.samples}
    check(len(by_id) == len(prof.samples) == len(snap["traces"]),
          "%s: %d samples (%d ids), JSON %d traces" %
          (name, len(prof.samples), len(by_id), len(snap["traces"])))
    for tr in snap["traces"]:
        s = by_id.get(tr["id"])
        check(s is not None, "%s: no sample for trace %s" % (name, tr["id"]))
        want = [tr[k] for k in VALUE_KEYS]
        check(s["values"] == want, "%s: trace %d values %r, JSON %r" %
              (name, tr["id"], s["values"], want))
        groups = address_groups(tr["frames"])
        check(len(s["locations"]) == len(groups) or (not groups and len(s["locations"]) == 1),
              "%s: trace %d has %d locations, JSON %d frames" %
              (name, tr["id"], len(s["locations"]), len(groups)))
        for loc_id, (addr, srcs) in zip(s["locations"], groups):
            check_location(prof, loc_id, addr, srcs, "%s trace %d" % (name, tr["id"]))
    print("ok: %s: %d samples equal the JSON's traces" % (name, len(prof.samples)))


def go_totals(ctx, path, snap):
    """go tool pprof -top: each sample type's total is the JSON traces' sum."""
    go = fleetlib.need("go", "golang-go")
    env = ctx.env_with(HOME=ctx.workdir, PPROF_TMPDIR=ctx.workdir, GOCACHE=ctx.path("gocache"))
    for (typ, unit), key in zip(TYPES, VALUE_KEYS):
        cmd = [go, "tool", "pprof", "-top", "-symbolize=none", "-sample_index=" + typ]
        if unit == "bytes":
            cmd.append("-unit=B")
        proc = e2elib.run(cmd + [path], env, timeout=120)
        check(proc.returncode == 0, "go tool pprof failed:\n%s" % e2elib.describe(proc))
        m = re.search(r"Total samples = (\d+)(B?)\s", proc.stdout)
        check(m, "no 'Total samples' in go tool pprof -top:\n%s" % proc.stdout[:2000])
        want = sum(t[key] for t in snap["traces"])
        check(int(m.group(1)) == want, "go tool pprof %s total %s, JSON traces sum %d" %
              (typ, m.group(1), want))
        if key == "live_bytes":
            check(want == snap["totals"]["live_bytes"], "JSON traces' live bytes %d != totals %d" %
                  (want, snap["totals"]["live_bytes"]))
    print("ok: go tool pprof -top totals equal the JSON for all four sample types")


def export(ctx, args, extra, name):
    out = ctx.path(name)
    proc = e2elib.run([args.memtop, "--export", out] + extra, ctx.env_with(MEMTOP_TEMP_MS=0))
    check(proc.returncode == 0, "memtop %s --export %s:\n%s" % (extra, name, e2elib.describe(proc)))
    return out


def check_program(ctx, args, prog, stem):
    """Record prog with the pprof export of -- PROG; compare -f exports at the
    recording's end and half-way (--at) with their JSON; the end's snapshot."""
    rec = ctx.path(stem + ".dat")
    export(ctx, args, ["--record", rec, "--"] + prog, stem + "-live.pb.gz")
    live = fleetlib.decode_pprof(ctx.path(stem + "-live.pb.gz"))
    end = e2elib.load_json(export(ctx, args, ["-f", rec], stem + "-end.json"))
    half = "%.3f" % (float(end["recording"]["duration_s"]) / 2)
    for extra, name in ((["-f", rec], "end"), (["-f", rec, "--at", half], "half")):
        snap = e2elib.load_json(export(ctx, args, extra, "%s-%s.json" % (stem, name)))
        for ext in (".pprof", ".pb.gz"):
            out = export(ctx, args, extra, "%s-%s%s" % (stem, name, ext))
            compare(fleetlib.decode_pprof(out), snap, os.path.basename(out))
    live_bytes = sum(s["values"][0] for s in live.samples)
    check(live_bytes == end["totals"]["live_bytes"],
          "-- PROG's profile holds %d live bytes, the recording's end %d" %
          (live_bytes, end["totals"]["live_bytes"]))
    return live, end


def test(args):
    fleetlib.need("protoc", "protobuf-compiler")
    fleetlib.need("readelf", "binutils")
    ctx = e2elib.Ctx(args)
    _, end = check_program(ctx, args, [args.exact, ctx.path("ground.json")], "exact")
    demo, _ = check_program(ctx, args, [args.demo, "1"], "demo")
    check(any(len(loc["lines"]) > 1 for loc in demo.locations.values()),
          "memtop-demo's profile has no location with inlined lines")
    print("ok: inlined frames are extra Lines of one Location")
    go_totals(ctx, ctx.path("exact-end.pb.gz"), end)
    rec = ctx.path("exact.dat")
    top = e2elib.load_json(export(ctx, args, ["-f", rec, "--top", "3"], "top.json"))
    prof = fleetlib.decode_pprof(export(ctx, args, ["-f", rec, "--top", "3"], "top.pb.gz"))
    other = [s for s in prof.samples if "other_traces" in s["labels"]]
    check(len(prof.samples) == 4 and len(other) == 1 and
          other[0]["values"] == [top["traces"][3][k] for k in VALUE_KEYS],
          "--top 3: samples %r, JSON (other) %r" % (prof.samples, top["traces"][3:]))
    print("ok: --top 3 keeps 3 traces and one (other) sample like the JSON")
    check(prof.period == 1, "an exact profile's period: %r, want 1" % prof.period)
    sampled = fleetlib.decode_pprof(export(ctx, args, ["--sample", "64k", "--", args.demo, "1"],
                                           "sampled.pb.gz"))
    check(sampled.period == 65536 and any("sampled 1/64 KiB" in c for c in sampled.comments),
          "a sampled profile's period %r (want 65536) and comments %r" %
          (sampled.period, sampled.comments))
    print("ok: period 1 when exact, the sampling's 65536 bytes when sampled at 64k")


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
