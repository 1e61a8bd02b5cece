"""e2elib.py -- shared helpers of memtop's end-to-end tests (python3, stdlib only).

Why it exists: every e2e script needs the same plumbing: the paths CMake
passes in, a private work directory with its own MEMTOP_SHM_DIR (so tests
running side by side never see each other's segments), running a command
with a timeout and no stdin, polling for a condition, and the JSON snapshot
shape check.  Each script imports this file from its own directory.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

RUN_TIMEOUT_S = 120
SKIP = 77  # ctest's SKIP_RETURN_CODE: the machine cannot run this test at all


class TestFailure(Exception):
    """An assertion of the test failed; the message says what and why."""


def fail(msg):
    raise TestFailure(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def parse_args(description, argv=None):
    """The options every e2e script accepts (CMake passes them all)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--memtop", help="the memtop executable")
    p.add_argument("--preload", help="libmemtop.so")
    p.add_argument("--demo", help="memtop-demo")
    p.add_argument("--exact", help="memtop-exact")
    p.add_argument("--many-stacks", help="memtop-many-stacks")
    p.add_argument("--call-paths", help="memtop-call-paths")
    p.add_argument("--hammer", help="torn_hammer (check_torn.py)")
    p.add_argument("--steady", help="steady_rate (check_rates.py)")
    p.add_argument("--proctitle", help="proctitle (check_proctitle.py)")
    p.add_argument("--thread-churn", help="thread_churn (check_threads.py)")
    p.add_argument("--make-segment", help="make_segment (sec_shrinking_segment.py)")
    p.add_argument("--open-loop", help="open_loop (sec_rootlink.py)")
    p.add_argument("--nodiag", help="nodiag.so (sec_serve_nodiag.py)")
    p.add_argument("--map-wait", help="map_wait (sec_clean_all.py)")
    p.add_argument("--workdir", required=True, help="private scratch directory (wiped)")
    p.add_argument("--source-dir", help="the repository root")
    p.add_argument("--build-dir", help="the CMake build tree")
    p.add_argument("--cmake", default="cmake", help="the cmake executable")
    return p.parse_args(argv)


class Ctx:
    """A test's private directory, its MEMTOP_SHM_DIR and environment."""

    def __init__(self, args):
        self.args = args
        self.workdir = os.path.abspath(args.workdir)
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        self.shm_dir = os.path.join(self.workdir, "shm")
        os.mkdir(self.shm_dir, 0o700)
        self.env = dict(os.environ)
        for key in list(self.env):
            if key.startswith("MEMTOP_") or key == "LD_PRELOAD":
                del self.env[key]
        self.env["MEMTOP_SHM_DIR"] = self.shm_dir
        self.env["LC_ALL"] = "C"

    def path(self, name):
        return os.path.join(self.workdir, name)

    def env_with(self, **extra):
        env = dict(self.env)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def segments(self):
        return sorted(n for n in os.listdir(self.shm_dir) if n.startswith("memtop-"))


def show_cmd(cmd):
    return shlex.join(str(c) for c in cmd)


def run(cmd, env, timeout=RUN_TIMEOUT_S, cwd=None):
    """Runs cmd to completion with no stdin; returns CompletedProcess (text)."""
    try:
        return subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        fail("timed out after %ds: %s\nstdout:\n%s\nstderr:\n%s" %
             (timeout, show_cmd(cmd), e.stdout, e.stderr))


def describe(proc):
    return "exit %s\n--- stdout ---\n%s--- stderr ---\n%s" % (proc.returncode, proc.stdout,
                                                              proc.stderr)


def start_preloaded(ctx, cmd, **extra_env):
    """Starts cmd in the background with libmemtop.so preloaded."""
    env = ctx.env_with(LD_PRELOAD=ctx.args.preload, **extra_env)
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def wait_for(pred, what, timeout=30.0, step=0.05):
    """Polls pred() until it returns a true value (returned) or timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            fail("gave up waiting (%ds) for %s" % (timeout, what))
        time.sleep(step)


def wait_segment(ctx, proc):
    """Waits until the segment of the background process proc exists."""
    seg = os.path.join(ctx.shm_dir, "memtop-%d" % proc.pid)

    def ready():
        if proc.poll() is not None:
            fail("the preloaded process exited (%s) before its segment appeared; stderr:\n%s" %
                 (proc.returncode, proc.stderr.read()))
        return os.path.exists(seg) and os.path.getsize(seg) > 0

    wait_for(ready, "segment %s" % seg)
    return seg


SEGMENT_MAP = re.compile(r"/memtop-[0-9]+(-[0-9a-f]+)?$", re.M)
PRELOAD_MAP = re.compile(r"/libmemtop\.so$", re.M)


def skip_unless_root(why="needs root for unshare"):
    """Exits SKIP (not a pass: nothing was checked) unless run as root."""
    if os.geteuid() != 0:
        print("SKIP: " + why, flush=True)
        sys.exit(SKIP)


def unshare_ended(proc):
    """An `unshare` (proc, its stderr piped) that ended before its target
    came up: SKIP where / is no mount point (a chroot: no private mount
    namespace here), else the failure."""
    err = proc.stderr.read()
    if "cannot change root filesystem propagation" in err:
        print("SKIP: %s" % err.strip(), flush=True)
        sys.exit(SKIP)
    fail("unshare exited (%s): %s" % (proc.returncode, err))


def start_in_namespaces(ctx, cmd, pid_ns=True, size="64m", env=None, until=None, shared=False):
    """cmd preloaded inside `unshare -m [-p -f]` with a private tmpfs as its
    MEMTOP_SHM_DIR (a tmpfs of `size`) that the host does not see, as in a
    container (needs root); returns (the unshare process, the target's host
    pid, once it maps its segment).  Stop it with stop(): unshare kills a
    forked child with it.  env: the environment (default ctx.env); until: a
    regular expression on its maps to wait for instead of its segment (e.g.
    PRELOAD_MAP, for a target that cannot create one); shared: no tmpfs, the
    host's MEMTOP_SHM_DIR (as the containers of one pod share /dev/shm)."""
    mount = "" if shared else "mount -t tmpfs -o size=%s memtop-ns %s && " % (
        size, shlex.quote(ctx.shm_dir))
    inner = "%sexec env LD_PRELOAD=%s %s" % (
        mount, shlex.quote(ctx.args.preload), shlex.join(cmd))
    flags = ["-m", "-p", "-f", "--kill-child"] if pid_ns else ["-m"]
    proc = subprocess.Popen(["unshare"] + flags + ["sh", "-c", inner], env=env or ctx.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)

    def target():
        if proc.poll() is not None:
            unshare_ended(proc)
        pid = proc.pid
        if pid_ns:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            if not kids:
                return None
            pid = int(kids[0])
        try:
            with open("/proc/%d/maps" % pid) as f:
                # memtop-<pid>[-<hex>], not the program memtop-demo itself
                return pid if (until or SEGMENT_MAP).search(f.read()) else None
        except OSError:
            return None

    # Its target is pid 1 of a PID namespace, where a signal it has no
    # handler for is ignored: unshare passes SIGTERM on, nothing ends, and
    # stop() waited its 10 s each time (e2e_namespaces took 51 s, up to the
    # timeout under load).  stop() kills it (unshare --kill-child's SIGKILL).
    proc.pid1 = pid_ns
    return proc, wait_for(target, "the namespaced target's segment")


def stop(proc):
    """Ends a background process this test started (by its own handle):
    SIGTERM, SIGKILL after 10 s; at once for pid 1 of a PID namespace
    (start_in_namespaces), which would ignore SIGTERM."""
    if proc.poll() is None and getattr(proc, "pid1", False):
        proc.kill()
        proc.wait()
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def end_pid(pid):
    """SIGTERM to a process this test's target forked (no handle of ours:
    known by its pid only), if it is still there; None: nothing to end."""
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def load_json(path):
    check(os.path.exists(path), "%s was not written" % path)
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            fail("%s is not valid JSON: %s" % (path, e))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def is_hex(v):
    return isinstance(v, str) and v.startswith("0x") and len(v) > 2 and \
        all(c in "0123456789abcdefABCDEF" for c in v[2:])


TOTALS_INT = ["live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count",
              "free_bytes", "temporary_count", "peak_live_bytes", "unknown_free_count",
              "rss_bytes"]
TRACE_INT = ["id", "live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count",
             "free_bytes", "temporary_count", "peak_live_bytes"]


def snapshot_shape_errors(snap):
    """Every way snap departs from the documented JSON snapshot shape."""
    errs = []
    if not isinstance(snap, dict):
        return ["the snapshot is not a JSON object"]
    top = {"memtop_snapshot": is_int, "pid": is_int, "exe": lambda v: isinstance(v, str),
           "cmdline": lambda v: isinstance(v, str), "exited": lambda v: isinstance(v, bool),
           "time_unix": is_num, "uptime_s": is_num,
           "totals": lambda v: isinstance(v, dict), "traces": lambda v: isinstance(v, list)}
    for key, ok in top.items():
        if key not in snap:
            errs.append("missing top-level key %r" % key)
        elif not ok(snap[key]):
            errs.append("top-level %r has the wrong type: %r" % (key, snap[key]))
    if errs:
        return errs
    if snap["memtop_snapshot"] != 1:
        errs.append("memtop_snapshot is %r, expected 1" % snap["memtop_snapshot"])
    totals = snap["totals"]
    for key in TOTALS_INT:
        if not is_int(totals.get(key)):
            errs.append("totals.%s missing or not an integer: %r" % (key, totals.get(key)))
    if "allocator_bytes" not in totals or not (
            totals["allocator_bytes"] is None or is_int(totals["allocator_bytes"])):
        errs.append("totals.allocator_bytes missing or not an integer/null")
    for i, tr in enumerate(snap["traces"]):
        errs.extend(trace_shape_errors(i, tr))
        if len(errs) > 20:
            errs.append("... (more)")
            break
    return errs


def trace_shape_errors(i, tr):
    errs = []
    if not isinstance(tr, dict):
        return ["traces[%d] is not an object" % i]
    for key in TRACE_INT:
        if key == "id" and tr.get(key) is None and is_int(tr.get("other_traces")):
            continue  # the "(other)" row of an export bounded by --top
        if not is_int(tr.get(key)):
            errs.append("traces[%d].%s missing or not an integer: %r" % (i, key, tr.get(key)))
    if not is_num(tr.get("growth_bytes_per_s")):
        errs.append("traces[%d].growth_bytes_per_s missing or not a number" % i)
    frames = tr.get("frames")
    if not isinstance(frames, list):
        return errs + ["traces[%d].frames missing or not a list" % i]
    for j, fr in enumerate(frames):
        where = "traces[%d].frames[%d]" % (i, j)
        if not isinstance(fr, dict):
            errs.append(where + " is not an object")
            continue
        for key in ("address", "module", "offset", "function", "file", "line", "inlined"):
            if key not in fr:
                errs.append("%s has no %r" % (where, key))
        if not is_hex(fr.get("address")):
            errs.append("%s.address is not a 0x hex string: %r" % (where, fr.get("address")))
        if fr.get("offset") is not None and not is_hex(fr.get("offset")):
            errs.append("%s.offset is not a 0x hex string: %r" % (where, fr.get("offset")))
        if fr.get("module") is not None and not isinstance(fr.get("module"), str):
            errs.append("%s.module is not a string" % where)
        if not isinstance(fr.get("inlined", False), bool):
            errs.append("%s.inlined is not a boolean" % where)
    return errs


def main(test_fn, description):
    """Runs test_fn(args); prints PASS or FAIL with the reason; exits 0/1."""
    args = parse_args(description)
    name = os.path.basename(sys.argv[0])
    try:
        test_fn(args)
    except TestFailure as e:
        print("FAIL %s: %s" % (name, e), flush=True)
        sys.exit(1)
    print("PASS %s" % name, flush=True)
    sys.exit(0)
