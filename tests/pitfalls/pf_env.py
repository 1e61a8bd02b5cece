#!/usr/bin/env python3
"""Pitfall 10: bad MEMTOP_* values.  The program runs with the same output
and exit code; stderr has exactly one memtop warning per bad variable
(naming it); the defaults stay in force (depth 32, interval 1000 ms,
temporary 100 ms).  MEMTOP_DISABLE=1 creates no segment.  An unusable
MEMTOP_SHM_DIR costs one warning and nothing else."""
import os
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

BAD = (("MEMTOP_DEPTH", "abc"), ("MEMTOP_DEPTH", "100000"), ("MEMTOP_DEPTH", "0"),
       ("MEMTOP_TEMP_MS", "-5"), ("MEMTOP_INTERVAL_MS", "0"),
       ("MEMTOP_INTERVAL_MS", "99999999999999999999999"), ("MEMTOP_LOG", "bogus"),
       ("MEMTOP_UNWIND", "fast"), ("MEMTOP_MALLINFO", "never"), ("MEMTOP_MAX_TRACES", "100"),
       ("MEMTOP_MAX_TRACES", "4194305"), ("MEMTOP_MAX_TRACES", "-1"))
DEFAULTS = {"max_depth": 32, "interval_ms": 1000, "temporary_ns": 100 * 1000 * 1000}


def memtop_lines(res):
    return [l for l in res.err.splitlines() if "memtop" in l.lower()]


def check_warnings(t, res, names, what):
    lines = memtop_lines(res)
    t.check(len(lines) == len(names), "%s: %d memtop lines on stderr, expected %d:\n%s"
            % (what, len(lines), len(names), "\n".join(lines)))
    for n in names:
        t.check(any(n in l for l in lines), "%s: no warning names %s" % (what, n))


def bad_values(t, cmd, plain):
    cases = [{k: v} for k, v in BAD] + [{"MEMTOP_DEPTH": "abc", "MEMTOP_LOG": "bogus",
                                          "MEMTOP_TEMP_MS": "1e3"}]
    for env in cases:
        what = " ".join("%s=%s" % kv for kv in env.items())
        shm = t.shm_dir()
        res, snap = t.run_kept(cmd, shm, env)
        t.expect(res, plain.rc, plain.out)
        check_warnings(t, res, list(env), what)
        t.check_no_segments(shm, what)
        for key, want in DEFAULTS.items():
            if snap and key in snap:
                t.check(snap[key] == want, "%s: %s = %s, expected the default %s"
                        % (what, key, snap[key], want))


def disabled(t, cmd, plain):
    shm = t.shm_dir()
    res, _ = t.run_kept(cmd, shm, {"MEMTOP_DISABLE": "1"}, expect_segment=False)
    t.expect(res, plain.rc, plain.out)
    t.check(not memtop_lines(res), "MEMTOP_DISABLE=1: memtop wrote to stderr:\n" + res.err)
    t.check_no_segments(shm, "MEMTOP_DISABLE=1")


def bad_dirs(t, cmd, plain):
    afile = t.path("a-file")
    open(afile, "w").close()
    dirs = [t.path("does/not/exist"), afile, "/" + "x" * 5000]
    if os.geteuid() == 0:
        dirs.append("/sys")  # EACCES even for root
    else:
        ro = t.shm_dir("read-only")
        os.chmod(ro, 0o555)
        dirs.append(ro)
    for d in dirs:
        # MEMTOP_START_MS=0: the segment is tried at start, not 100 ms later
        # (pf_simple lives about that long: pitfall_start covers the rest)
        res = t.run_preloaded(cmd, d, {"MEMTOP_START_MS": "0"})
        what = "MEMTOP_SHM_DIR=%s" % d[:60]
        t.expect(res, plain.rc, plain.out)
        lines = memtop_lines(res)
        t.check(len(lines) == 1, "%s: %d memtop lines on stderr, expected 1:\n%s"
                % (what, len(lines), "\n".join(lines)))


t = Test("env")
cmd = [t.prog("pf_simple"), "100"]
plain = t.run_plain(cmd)
if t.expect(plain, 4) and t.have_lib:
    t.check(plain.err == "", "the plain run wrote to stderr: " + plain.err)
    bad_values(t, cmd, plain)
    disabled(t, cmd, plain)
    bad_dirs(t, cmd, plain)
t.finish()
