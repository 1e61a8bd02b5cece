"""test_writer_common.py -- shared plumbing of the recording writer's tests
(test_writer_*.py): paths from the command line, running a target under
libmemtop.so, decoding a recording with dat_dump, mapping trace addresses
to function names with nm.  Not a test itself."""
import argparse
import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import time


def args():
    p = argparse.ArgumentParser()
    for name in ("preload", "exact", "demo", "dump", "ctl", "workdir"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--progs", default="")
    p.add_argument("--memtop", default="")
    p.add_argument("--plugin", default="")
    p.add_argument("--plugin-b", default="")
    p.add_argument("--bench", default="")
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    return a


_procs = []


@atexit.register
def _kill_started():
    """A failed check exits: no process that start() made may outlive the test."""
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def start(argv, **kw):
    """subprocess.Popen, killed at the test's exit if still running."""
    p = subprocess.Popen(argv, **kw)
    _procs.append(p)
    return p


def record_attached(a, pid, path, extra=(), seconds=2.5):
    """memtop -p PID --record PATH [extra] for `seconds`, then Ctrl-C:
    (exit status, stdout, stderr)."""
    menv = dict(os.environ, MEMTOP_SHM_DIR=a.workdir)
    m = start([a.memtop, "-p", str(pid), "--record", path] + list(extra), env=menv,
              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    m.send_signal(signal.SIGINT)
    out, err = m.communicate(timeout=60)
    return m.returncode, out, err


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def env(a, **extra):
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir})
    e.pop("MEMTOP_RECORD", None)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def dump(a, path, traces=False, expect_ok=True):
    cmd = [a.dump] + (["--traces"] if traces else []) + [path]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if expect_ok and r.returncode != 0:
        fail("dat_dump %s: rc %d: %s" % (path, r.returncode, r.stderr.strip()))
    info, rows = {}, []
    for line in r.stdout.splitlines():
        if line.startswith("trace "):
            m = re.match(r"trace (\d+) at (\S+) 0x([0-9a-f]+) replay ((?:\d+ ?){6}) final ((?:\d+ ?){6})",
                         line)
            rows.append((int(m.group(1)), m.group(2), int(m.group(3), 16),
                         [int(x) for x in m.group(4).split()], [int(x) for x in m.group(5).split()]))
        else:
            k, _, v = line.partition(" ")
            info[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return info, rows, r


def functions(binary):
    """[(start, end, name)] of the defined functions of an executable."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                         text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            start = int(parts[0], 16)
            funcs.append((start, start + int(parts[1], 16), parts[3]))
    return funcs


def name_of(funcs, off):
    for s, e, n in funcs:
        if s <= off < e:
            return n
    return None


def ctl(a, pid, *cmd):
    r = subprocess.run([a.ctl, a.workdir, str(pid)] + list(cmd), capture_output=True, text=True,
                       timeout=60)
    out = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" ")
        out[k] = v
    return r.returncode, out


def wait_segment(a, pid, timeout=10):
    path = os.path.join(a.workdir, "memtop-%d" % pid)
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return
        time.sleep(0.05)
    fail("no segment for pid %d" % pid)


def mode_ok(path):
    st = os.stat(path)
    return (st.st_mode & 0o777) == 0o600


def approx_events(out):
    """How many events the target counted as dropped because its initial
    state was copied while calls went on (a starved pause: the start's
    status says "initial state approximate (N events ...)"); 0 if exact."""
    m = re.search(r"initial state approximate \((\d+) events", out.get("rec_message", ""))
    return int(m.group(1)) if m else 0


def consistent(info, rows, approx=0):
    """The replay accounts for every event the target counted: per trace
    replay == final when nothing was dropped; otherwise the LOST records
    explain the difference exactly (the drop policy is timing-dependent, so
    tests accept drops but never unexplained ones).  The one exception is an
    approximate initial state (approx > 0, approx_events): those events may
    be in the copy as well as in the LOST records, so replay + lost may
    exceed the final counters by at most approx, never fall short."""
    if info["end_dropped"] != info["lost_alloc"] + info["lost_free"]:
        return "END says %d dropped, LOST records %d" % (
            info["end_dropped"], info["lost_alloc"] + info["lost_free"])
    if info["end_dropped"] == 0:
        bad = [r for r in rows if r[3] != r[4]]
        return "replay != final: %s" % bad[:3] if bad else None
    got_a = sum(r[3][0] for r in rows) + info["lost_alloc"]
    got_f = sum(r[3][2] for r in rows) + info["lost_free"]
    want_a, want_f = sum(r[4][0] for r in rows), sum(r[4][2] for r in rows)
    over = (got_a - want_a) + (got_f - want_f)
    if (got_a, got_f) != (want_a, want_f) and not (
            approx and got_a >= want_a and got_f >= want_f and over <= approx):
        return "replay + lost (%d, %d) != final (%d, %d)%s" % (
            got_a, got_f, want_a, want_f, " (approximate initial state: %d)" % approx)
    return None
