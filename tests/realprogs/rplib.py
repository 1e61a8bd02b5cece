"""rplib -- shared bits of the real-program tests: import of the pitfall
tests' driver library, program lookup (skip when not installed), the
"memtop really tracked it" check, and the leak tests' `memtop --batch -s
leak` report with its export."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pitfalls", "lib"))
from mtplib import SKIP, Test  # noqa: E402,F401


def script(name):
    return os.path.join(HERE, "scripts", name)


def need(*progs):
    """Absolute paths of the programs, or exit SKIP if one is missing."""
    paths = [shutil.which(p) for p in progs]
    if None in paths:
        print("SKIP: not installed: %s" % [p for p, q in zip(progs, paths) if q is None])
        sys.exit(SKIP)
    return paths


def check_tracked(t, snap, what, min_allocs=1):
    """The final snapshot shows real tracking: traces with frames, and
    allocations counted."""
    if snap is None:
        return
    tot = snap.get("totals", {})
    traces = snap.get("traces", [])
    t.check(tot.get("alloc_count", 0) >= min_allocs, "%s: totals.alloc_count = %s (want >= %d)"
            % (what, tot.get("alloc_count"), min_allocs))
    t.check(len(traces) > 0, "%s: no traces in the snapshot" % what)
    t.check(any(tr.get("frames") for tr in traces), "%s: no trace has frames" % what)


# A `memtop --batch` row: LIVE BLOCKS ALLOCS TEMP GROWTH LEAK LOCATION.
ROW = re.compile(r"^\s*([\d.]+ \S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+ ?\S*/s)\s+(\d+)\s+(.*)$")


def rows_of(text):
    """The rows of a `memtop --batch` report: blocks, growth, where (the
    LOCATION; callers: the " <- " callers that rows sharing it name)."""
    rows = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            where, _, callers = m.group(7).strip().partition(" <- ")
            rows.append({"blocks": int(m.group(2)), "growth": m.group(5),
                         "leak": int(m.group(6)), "where": where, "callers": callers})
    return rows


def leak_report(memtop, pid, shm, export):
    """`memtop -p PID --batch -s leak --top 5` and an export of the same
    snapshot's traces sorted by leak to export (a .json path): (report text,
    its rows, the export's traces).  Exits 1 on a memtop failure."""
    env = dict(os.environ, MEMTOP_SHM_DIR=shm)
    env.pop("MEMTOP_SKIP_FUNCS", None)
    out = subprocess.run([memtop, "-p", str(pid), "--batch", "-n", "1", "-s", "leak", "--top",
                          "5", "-e", export], env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        print("FAIL: memtop exited %d:\n%s%s" % (out.returncode, out.stdout, out.stderr))
        sys.exit(1)
    with open(export) as f:
        traces = json.load(f)["traces"]
    return out.stdout, rows_of(out.stdout), traces


def location_frame(trace):
    """The index in trace["frames"] of the frame its location names."""
    for i, fr in enumerate(trace["frames"]):
        mod = os.path.basename(fr["module"] or "")
        if fr["function"] and trace["location"].startswith(fr["function"] + " ("):
            return i
        if not fr["function"] and trace["location"].startswith("%s+%s" % (mod, fr["offset"])):
            return i
    return None


def leak_workdir(name):
    """A fresh work directory MTP_WORK/name with a private segment
    directory: (work, shm).  Exits SKIP without MTP_LIB / MTP_MEMTOP."""
    if not os.environ.get("MTP_LIB") or not os.environ.get("MTP_MEMTOP"):
        print("SKIP: MTP_LIB / MTP_MEMTOP not set")
        sys.exit(SKIP)
    work = os.path.join(os.environ.get("MTP_WORK", "/tmp"), name)
    shutil.rmtree(work, ignore_errors=True)
    shm = os.path.join(work, "shm")
    os.makedirs(shm, mode=0o700)
    return work, shm


def _wait_file(path, proc, seconds):
    for _ in range(int(seconds * 10)):
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            print("FAIL: %s exited with %s" % (proc.args[0], proc.returncode))
            sys.exit(1)
        time.sleep(0.1)
    print("FAIL: no %s after %d s" % (path, seconds))
    sys.exit(1)


def leak_run(cmd, work, shm, stdin_text=None):
    """Runs cmd under libmemtop.so (no MEMTOP_SKIP_FUNCS) until it creates
    work/half, takes leak_report one second later, then creates work/stop
    and waits for cmd to end (killed after 120 s).  Returns leak_report's
    answer."""
    env = dict(os.environ, LD_PRELOAD=os.environ["MTP_LIB"], MEMTOP_SHM_DIR=shm)
    env.pop("MEMTOP_SKIP_FUNCS", None)
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        if stdin_text:
            proc.stdin.write(stdin_text)
        proc.stdin.close()
        _wait_file(os.path.join(work, "half"), proc, 120)
        time.sleep(1)
        return leak_report(os.environ["MTP_MEMTOP"], proc.pid, shm,
                           os.path.join(work, "leak.json"))
    finally:
        open(os.path.join(work, "stop"), "w").close()
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
