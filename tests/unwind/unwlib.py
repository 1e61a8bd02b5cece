"""unwlib -- shared code of the own-unwinder tests.

Runs a command plainly and then preloaded with MEMTOP_UNWIND=check
(libmemtop.so unwinds every allocation with its own walker and with
libunwind, and compares), MEMTOP_LOG=info and MEMTOP_LOG_FILE=<dir>/log-%p,
so that every process of the command (children included) logs its
"unwind summary" line at exit; the lines are collected and summed.
Uses tests/pitfalls/lib/mtplib.py for running and failure bookkeeping.
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pitfalls", "lib"))
from mtplib import SKIP, Test  # noqa: E402,F401

SUMMARY = re.compile(r"memtop\[(\d+)\]: unwind summary: mode=check own=(\d+) fallback=(\d+) "
                     r"mismatch=(\d+)(?: reuse=(\d+))?")
MISMATCH = re.compile(r"memtop\[\d+\]: unwind check: mismatch .*")


class Summary:
    """The unwind summaries of all processes of one run, summed."""

    def __init__(self):
        self.processes = 0
        self.own = self.fallback = self.mismatch = 0
        self.reuse = None  # walks that replayed part of the thread's previous walk
        self.mismatch_lines = []

    def describe(self):
        return "%d process(es): own=%d fallback=%d mismatch=%d reuse=%s" % (
            self.processes, self.own, self.fallback, self.mismatch, self.reuse)


def env_path(name):
    """A path CMake passes in the environment, or exit SKIP without it."""
    p = os.environ.get(name, "")
    if not p or not os.path.exists(p):
        print("SKIP: %s not available (%r)" % (name, p))
        sys.exit(SKIP)
    return p


def need(prog):
    """The absolute path of an installed program, or None (the caller skips it)."""
    return shutil.which(prog)


def read_logs(logdir):
    s = Summary()
    for name in sorted(os.listdir(logdir)):
        with open(os.path.join(logdir, name), errors="replace") as f:
            for line in f:
                m = SUMMARY.search(line)
                if m:
                    s.processes += 1
                    s.own += int(m.group(2))
                    s.fallback += int(m.group(3))
                    s.mismatch += int(m.group(4))
                    if m.group(5) is not None:
                        s.reuse = (s.reuse or 0) + int(m.group(5))
                elif MISMATCH.search(line):
                    s.mismatch_lines.append(line.strip())
    return s


def run_check(t, cmd, tag, rc=0, compare_out=True, env=None, **kw):
    """Runs cmd plainly (must exit rc), then preloaded in check mode (same
    exit code, and the same stdout if compare_out).  Returns the Summary,
    or None without libmemtop.so or when the plain run failed."""
    plain = t.run_plain(cmd, env=env, **kw)
    if not t.expect(plain, rc) or not t.have_lib:
        return None
    logdir = t.path("logs-" + tag)
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    extra = dict(env or {})
    extra.update({"MEMTOP_UNWIND": "check", "MEMTOP_LOG": "info",
                  "MEMTOP_LOG_FILE": os.path.join(logdir, "log-%p")})
    res = t.run_preloaded(cmd, t.shm_dir("shm-" + tag), extra, **kw)
    t.expect(res, rc, plain.out if compare_out else None)
    s = read_logs(logdir)
    t.log("%s: %s" % (tag, s.describe()))
    return s


def check_agree(t, s, tag, min_own=1, fallback_ok=True, max_fallback=None):
    """The own walker unwound at least min_own allocations, every process
    reported, and no walk disagreed with libunwind; with fallback_ok False
    no walk fell back to libunwind, with max_fallback at most that many."""
    if s is None:
        return
    t.check(s.processes > 0, "%s: no process logged an unwind summary" % tag)
    t.check(s.mismatch == 0 and not s.mismatch_lines,
            "%s: the own unwinder disagreed with libunwind: %s\n%s"
            % (tag, s.describe(), "\n".join(s.mismatch_lines[:10])))
    t.check(s.own >= min_own, "%s: only %d allocation(s) unwound by the own walker (want >= %d)"
            % (tag, s.own, min_own))
    if not fallback_ok:
        max_fallback = 0
    if max_fallback is not None:
        t.check(s.fallback <= max_fallback, "%s: %d walk(s) fell back to libunwind (want <= %d)"
                % (tag, s.fallback, max_fallback))
