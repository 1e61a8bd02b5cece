"""mtplib -- shared driver code for the pitfall and real-program tests.

Runs a program plainly and under LD_PRELOAD=libmemtop.so (always through
coreutils `timeout`, so a deadlock ends as a failure, not a hang), in a
private MEMTOP_SHM_DIR, and gets the final snapshot either from
`memtop --export X.json -- PROG` or, without the CLI, by keeping the
segment (MEMTOP_KEEP_PID) and dumping it with mtp_segtool.  Collects
failures and exits 1 (fail), 77 (skipped: libmemtop.so not built) or 0.

Configuration comes from the environment set by CMake (add_test):
MTP_LIB, MTP_MEMTOP, MTP_SEGTOOL, MTP_BIN, MTP_WORK.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77
TIMEOUT_RC = 124


class Result:
    """Outcome of one run."""

    def __init__(self, label, rc, out, err):
        self.label, self.rc, self.out, self.err = label, rc, out, err

    def describe(self):
        if self.rc == TIMEOUT_RC:
            return "%s: TIMED OUT (deadlock or hang)" % self.label
        if self.rc < 0:
            return "%s: killed by signal %d (crash)" % (self.label, -self.rc)
        return "%s: exit %d" % (self.label, self.rc)

    def tail(self):
        return "stdout:\n%s\nstderr:\n%s" % (self.out[-1500:], self.err[-3000:])


class Test:
    """One test: paths, scratch space, runners and a failure list."""

    def __init__(self, name):
        self.name = name
        self.lib = os.environ.get("MTP_LIB", "")
        self.memtop = os.environ.get("MTP_MEMTOP", "")
        self.segtool = os.environ.get("MTP_SEGTOOL", "")
        self.bin = os.environ.get("MTP_BIN", "")
        self.work = os.path.join(os.environ.get("MTP_WORK", "/tmp"), name)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.fails = []
        if self.lib and not os.path.exists(self.lib):
            self.lib = ""
        if self.memtop and not os.path.exists(self.memtop):
            self.memtop = ""
        self.have_lib = bool(self.lib)
        self.source = os.environ.get("MTP_SNAPSHOT", "export" if self.memtop else "segment")

    # ---- bookkeeping -------------------------------------------------
    def prog(self, name):
        return os.path.join(self.bin, name)

    def path(self, name):
        return os.path.join(self.work, name)

    def check(self, cond, msg, result=None):
        if not cond:
            self.fails.append(msg + ("\n" + result.tail() if result else ""))
        return cond

    def log(self, msg):
        print("[%s] %s" % (self.name, msg), flush=True)

    def finish(self):
        for f in self.fails:
            print("FAIL: " + f, flush=True)
        if self.fails:
            sys.exit(1)
        if not self.have_lib:
            print("SKIP: libmemtop.so not built; the programs ran plainly only")
            sys.exit(SKIP)
        print("PASS")
        sys.exit(0)

    def shm_dir(self, tag="shm"):
        d = self.path(tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    # ---- runners -----------------------------------------------------
    def preload_env(self, shm, extra=None):
        env = {"LD_PRELOAD": self.lib, "MEMTOP_SHM_DIR": shm}
        env.update(extra or {})
        return env

    def run(self, cmd, label, env=None, timeout=60, input=None, cwd=None):
        """Runs cmd under `timeout`; env: variables added to os.environ
        through `env(1)` so that `timeout` itself is never preloaded."""
        full = ["timeout", "-k", "5", str(timeout)]
        if env:
            full += ["env"] + ["%s=%s" % kv for kv in env.items()]
        p = subprocess.run(full + list(cmd), input=input, capture_output=True, text=True,
                           cwd=cwd, errors="replace")
        return Result(label, p.returncode, p.stdout, p.stderr)

    def popen_preloaded(self, cmd, shm, extra=None, timeout=90):
        """Starts cmd preloaded (under `timeout`) with pipes for stdin,
        stdout and stderr, for tests that interact with a live target."""
        env = ["%s=%s" % kv for kv in self.preload_env(shm, extra).items()]
        return subprocess.Popen(["timeout", "-k", "5", str(timeout), "env"] + env + list(cmd),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run_plain(self, cmd, **kw):
        return self.run(cmd, "plain " + os.path.basename(cmd[0]), **kw)

    def run_preloaded(self, cmd, shm, extra=None, **kw):
        return self.run(cmd, "preloaded " + os.path.basename(cmd[0]),
                        env=self.preload_env(shm, extra), **kw)

    def run_kept(self, cmd, shm, extra=None, timeout=60, input=None, cwd=None,
                 expect_segment=True):
        """Runs cmd preloaded with MEMTOP_KEEP_PID = its own pid, then dumps
        its final segment.  Returns (Result, snapshot or None)."""
        pidfile = self.path("kept.pid")
        env = dict(extra or {})
        env.update({"MTP_PRELOAD": self.lib, "MEMTOP_SHM_DIR": shm, "MTP_PIDFILE": pidfile})
        script = ('echo $$ > "$MTP_PIDFILE"; export MEMTOP_KEEP_PID=$$ '
                  'LD_PRELOAD="$MTP_PRELOAD"; exec "$@"')
        res = self.run(["sh", "-c", script, "sh"] + list(cmd),
                       "kept " + os.path.basename(cmd[0]), env=env, timeout=timeout,
                       input=input, cwd=cwd)
        try:
            pid = int(open(pidfile).read())
        except (OSError, ValueError):
            return res, None
        seg = os.path.join(shm, "memtop-%d" % pid)
        if not expect_segment:
            self.check(not os.path.exists(seg), "%s: a segment was created" % res.label)
            return res, None
        snap = self.segment_json(seg)
        if snap is not None:
            os.unlink(seg)
        else:
            self.check(False, "%s: no final segment %s kept (MEMTOP_KEEP_PID)"
                       % (res.label, seg))
        return res, snap

    def segment_json(self, seg, quiet=False):
        """The newest snapshot in segment file seg, or None."""
        if not os.path.exists(seg):
            return None
        p = subprocess.run([self.segtool, "json", seg], capture_output=True, text=True,
                           timeout=30)
        if p.returncode != 0:
            if not quiet:
                self.check(False, "segtool json %s: exit %d: %s" % (seg, p.returncode, p.stderr))
            return None
        return json.loads(p.stdout)

    def run_export(self, cmd, shm, extra=None, timeout=60, input=None, cwd=None):
        """Runs `memtop --export OUT.json -- cmd`.  Returns (Result, json)."""
        out = self.path("export.json")
        if os.path.exists(out):
            os.unlink(out)
        env = {"MEMTOP_SHM_DIR": shm}
        env.update(extra or {})
        res = self.run([self.memtop, "--export", out, "--"] + list(cmd),
                       "memtop --export " + os.path.basename(cmd[0]), env=env,
                       timeout=timeout, input=input, cwd=cwd)
        try:
            with open(out) as f:
                snap = json.load(f)
        except (OSError, ValueError) as e:
            self.check(False, "%s: no readable export: %s" % (res.describe(), e), res)
            snap = None
        return res, snap

    def export_live(self, pid, shm, name):
        """`memtop -p PID --export` of a running target (after a few of its
        publishes); the JSON, or None (checked)."""
        time.sleep(0.5)  # a few publishes after the last call
        out = self.path(name)
        p = subprocess.run(["timeout", "60", "env", "MEMTOP_SHM_DIR=" + shm, self.memtop, "-p",
                            str(pid), "--export", out], capture_output=True, text=True)
        if not self.check(p.returncode == 0,
                          "memtop --export: exit %d: %s" % (p.returncode, p.stderr)):
            return None
        with open(out) as f:
            return json.load(f)

    def run_snapshot(self, cmd, shm, extra=None, **kw):
        """Runs cmd tracked to completion; (Result, final snapshot)."""
        if self.source == "export":
            return self.run_export(cmd, shm, extra, **kw)
        return self.run_kept(cmd, shm, extra, **kw)

    def run_all(self, cmd, rc, extra=None, compare_out=True, leftovers_ok=False, expect_msg=None,
                **kw):
        """The usual sequence: plain run (must exit rc), preloaded run (same
        exit code and stdout, no memtop noise but the one line matching the
        regex expect_msg if given, no segment left), tracked run (same
        again, self-consistent final snapshot).  Returns the snapshot
        (None without libmemtop.so or on failure)."""
        plain = self.run_plain(cmd, **kw)
        if not self.expect(plain, rc) or not self.have_lib:
            return None
        want = plain.out if compare_out else None
        shm = self.shm_dir("shm-preloaded")
        pre = self.run_preloaded(cmd, shm, extra, **kw)
        self.expect(pre, rc, want)
        self.check_quiet(pre, expect_msg)
        if not leftovers_ok:
            self.check_no_segments(shm, pre.label)
        shm = self.shm_dir("shm-tracked")
        res, snap = self.run_snapshot(cmd, shm, extra, **kw)
        self.expect(res, rc, want)
        if not leftovers_ok:
            self.check_no_segments(shm, res.label)
        return self.check_snapshot(snap, res.label)

    def check_marker(self, snap, size, what, alloc=None, free=None, live=None):
        """Exact counts for the traces of marker size `size`."""
        if snap is None:
            return None
        m = marker(snap, size)
        for key, want in (("alloc_count", alloc), ("free_count", free), ("live_count", live)):
            if want is not None:
                self.check(m[key] == want, "%s (%d-byte blocks): %s = %d, expected %d"
                           % (what, size, key, m[key], want))
        return m

    # ---- common checks -----------------------------------------------
    def expect(self, res, rc, out=None):
        ok = self.check(res.rc == rc, "%s, expected exit %d" % (res.describe(), rc), res)
        if out is not None and ok:
            self.check(res.out == out, "%s: stdout differs from the plain run:\n--- plain\n%s\n"
                       "--- this run\n%s" % (res.label, out[-1500:], res.out[-1500:]))
        return ok

    def check_quiet(self, res, expect_msg=None):
        """No memtop diagnostics in a run that had no reason for any (but
        the one matching the regex expect_msg, which must be there)."""
        lines = [l for l in res.err.splitlines() if "memtop" in l.lower()]
        if expect_msg:
            said = [l for l in lines if re.search(expect_msg, l)]
            self.check(len(said) == 1, "%s: expected one memtop message matching %r, got %r"
                       % (res.label, expect_msg, said))
            lines = [l for l in lines if l not in said]
        self.check(not lines, "%s: unexpected memtop messages on stderr:\n%s"
                   % (res.label, "\n".join(lines[:10])))

    def check_no_segments(self, shm, what):
        left = segments(shm)
        self.check(not left, "%s: segment files left behind in %s:\n  %s"
                   % (what, shm, "\n  ".join(self.describe(shm, n) for n in left[:10])))

    def layout(self):
        if not hasattr(self, "_layout"):
            p = subprocess.run([self.segtool, "layout"], capture_output=True, text=True)
            self._layout = json.loads(p.stdout)
        return self._layout

    def describe(self, shm, name):
        """One line about a segment file, readable even when it is only
        half-initialised (no snapshot, or not even a magic number)."""
        lay = self.layout()
        try:
            with open(os.path.join(shm, name), "rb") as f:
                head = f.read(lay["header_bytes"])
        except OSError as e:
            return "%s: %s" % (name, e)

        def num(off, size, signed=False):
            return int.from_bytes(head[off:off + size], "little", signed=signed)

        def text(off, cap=200):
            return head[off:off + cap].split(b"\0")[0].decode(errors="replace")
        if num(0, 8) != lay["magic"]:
            return "%s: no magic (created, never initialised)" % name
        return "%s: pid %d ppid %d flags %d publishes %d exe %r cmdline %r" % (
            name, num(lay["pid_off"], 4, True), num(lay["ppid_off"], 4, True),
            num(lay["flags_off"], 4), num(lay["publish_count_off"], 8),
            text(lay["exe_off"]), text(lay["cmdline_off"]))

    def check_snapshot(self, snap, what, exited=True):
        """Self-consistency of a final snapshot; returns it or None."""
        if snap is None:
            return None
        for err in consistency_errors(snap):
            self.check(False, "%s: %s" % (what, err))
        if exited:
            self.check(snap.get("exited") is True, "%s: snapshot not marked exited" % what)
        return snap


def segments(shm):
    try:
        return sorted(n for n in os.listdir(shm) if n.startswith("memtop-"))
    except OSError:
        return []


TRACE_KEYS = ("alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count",
              "live_bytes", "temporary_count")


def neg(v):
    """Negative, or a uint64 that wrapped below zero."""
    return v < 0 or v >= 1 << 63


def consistency_errors(snap):
    """Per trace live = alloc - free, nothing negative, totals = sums."""
    errs = []
    sums = dict.fromkeys(TRACE_KEYS, 0)
    for t in snap.get("traces", []):
        for k in TRACE_KEYS:
            v = t.get(k)
            if not isinstance(v, int) or neg(v):
                errs.append("trace %s: %s = %r" % (t.get("id"), k, v))
                continue
            sums[k] += v
        if all(isinstance(t.get(k), int) for k in TRACE_KEYS):
            if t["live_count"] != t["alloc_count"] - t["free_count"]:
                errs.append("trace %s: live_count %d != alloc_count %d - free_count %d"
                            % (t["id"], t["live_count"], t["alloc_count"], t["free_count"]))
            if t["live_bytes"] != t["alloc_bytes"] - t["free_bytes"]:
                errs.append("trace %s: live_bytes %d != alloc_bytes %d - free_bytes %d"
                            % (t["id"], t["live_bytes"], t["alloc_bytes"], t["free_bytes"]))
            if t["temporary_count"] > t["free_count"]:
                errs.append("trace %s: temporary_count > free_count" % t["id"])
    totals = snap.get("totals", {})
    if totals.get("dropped_traces", 0) == 0:
        for k in TRACE_KEYS:
            if k in totals and totals[k] != sums[k]:
                errs.append("totals.%s = %d but the traces sum to %d" % (k, totals[k], sums[k]))
    for k, v in totals.items():
        if isinstance(v, int) and neg(v) and v != (1 << 64) - 1:
            errs.append("totals.%s = %d" % (k, v))
    return errs[:20]


def marker(snap, size):
    """Sums over the traces that only ever allocated blocks of `size`."""
    acc = {"alloc_count": 0, "free_count": 0, "live_count": 0, "temporary_count": 0,
           "traces": []}
    for t in (snap or {}).get("traces", []):
        n = t.get("alloc_count", 0)
        if n > 0 and t.get("alloc_bytes") == n * size:
            for k in ("alloc_count", "free_count", "live_count", "temporary_count"):
                acc[k] += t.get(k, 0)
            acc["traces"].append(t)
    return acc


def frame_module(trace, i=0):
    frames = trace.get("frames") or []
    if i >= len(frames):
        return None
    return frames[i].get("module")


# Polls pred every 50 ms until it returns a true value (returned) or secs pass (None).
def wait_for(pred, secs=20):
    end = time.time() + secs
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return None
