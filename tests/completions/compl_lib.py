"""compl_lib.py -- shared plumbing of the completion and man-page tests.

Why it exists: every test needs the truth about memtop's options, and the
shell tests need an attachable process and a stale segment.  The truth is
read from src/tui/base/cli_options.c itself (the long_opts table, the getopt
string, the sort and grouping names), so an option added there without
being completed or documented fails the tests.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77  # ctest SKIP_RETURN_CODE


class Option:
    """One option: long name (or None), short letter (or None), takes an argument."""

    def __init__(self, long, short, has_arg):
        self.long, self.short, self.has_arg = long, short, has_arg

    def words(self):
        """The spellings on a command line: -p, --pid."""
        return [w for w in (self.short and "-" + self.short, self.long and "--" + self.long) if w]

    def __repr__(self):
        return "/".join(self.words())


def read_cli_source(source_dir):
    with open(os.path.join(source_dir, "src/tui/base/cli_options.c")) as f:
        return f.read()


def parse_options(source_dir):
    """Every option of cli_options.c, from long_opts and the getopt string."""
    src = read_cli_source(source_dir)
    table = re.search(r"long_opts\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    if not table:
        sys.exit("cannot find long_opts[] in cli_options.c")
    opts, by_short = [], {}
    entry = re.compile(r'\{"([^"]+)",\s*(no|required|optional)_argument,\s*NULL,\s*([^}]+?)\s*\}')
    for name, arg, val in entry.findall(table.group(1)):
        short = val[1] if re.fullmatch(r"'.'", val) else None
        # optional_argument (--cull[=SECS]): only --opt=VALUE, the next
        # word is never its argument, so it completes as a flag
        o = Option(name, short, arg == "required")
        opts.append(o)
        if short:
            by_short[short] = o
    getopt = re.search(r'getopt_long\([^"]*"([^"]*)"', src)
    if not getopt or len(opts) < 10:
        sys.exit("cannot parse the options of cli_options.c")
    spec = getopt.group(1).lstrip("+-")
    for m in re.finditer(r"([A-Za-z0-9])(:{0,2})", spec):
        letter, colons = m.groups()
        if letter in by_short:
            if by_short[letter].has_arg != bool(colons):
                sys.exit(f"cli_options.c: -{letter} and its long form disagree on an argument")
        else:
            opts.append(Option(None, letter, bool(colons)))
    return opts


def parse_names(source_dir, array):
    """The strings of `static const char *const ARRAY[...] = {...};`."""
    src = read_cli_source(source_dir)
    m = re.search(array + r"\[[^\]]*\]\s*=\s*\{(.*?)\};", src, re.S)
    if not m:
        sys.exit(f"cannot find {array} in cli_options.c")
    return re.findall(r'"([^"]+)"', m.group(1))


def sort_keys(source_dir):
    return parse_names(source_dir, "sort_names")


def groupings(source_dir):
    return parse_names(source_dir, "group_names")


def short(value, limit=300):
    """repr of value, cut to limit characters."""
    r = repr(value)
    return r if len(r) <= limit else r[:limit] + "...]"


class Checker:
    """Collects failures, so one run reports all of them."""

    def __init__(self, name):
        self.name, self.failures, self.passed = name, [], 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)
            print(f"FAIL: {what}", flush=True)
        return ok

    def equal(self, got, want, what):
        return self.check(got == want, f"{what}: got {short(got)}, want {short(want)}")

    def done(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} failed, {self.passed} passed")
            sys.exit(1)
        print(f"{self.name}: all {self.passed} checks passed")
        sys.exit(0)


def common_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--memtop")
    p.add_argument("--preload")
    p.add_argument("--workdir")
    return p


def workdir(path):
    """A fresh private directory (under the build tree when given)."""
    if path:
        os.makedirs(path, exist_ok=True)
        return tempfile.mkdtemp(dir=path)
    return tempfile.mkdtemp(prefix="memtop-compl-")


class Segments:
    """A private MEMTOP_SHM_DIR with one live preloaded `sleep` and stale segments.

    live_pid: a process running with libmemtop.so whose segment exists.
    dead_pids: segment files of processes that do not exist.
    """

    def __init__(self, preload, base):
        self.dir = os.path.join(base, "shm")
        os.makedirs(self.dir, exist_ok=True)
        env = dict(os.environ, MEMTOP_SHM_DIR=self.dir, LD_PRELOAD=preload)
        self.proc = subprocess.Popen(["sleep", "60"], env=env)
        self.live_pid = self.proc.pid
        seg = os.path.join(self.dir, f"memtop-{self.live_pid}")
        deadline = time.monotonic() + 20
        while not os.path.exists(seg):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                sys.exit(f"no segment {seg} from the preloaded sleep")
            time.sleep(0.05)
        self.dead_pids = [self._exited_pid(), self._beyond_pid_max()]
        for pid in self.dead_pids:
            with open(os.path.join(self.dir, f"memtop-{pid}"), "w") as f:
                f.write("stale")
        # Names that are not segments must never be offered either.
        for junk in ("memtop-0123", "memtop-12x", "memtop-", "other-1"):
            open(os.path.join(self.dir, junk), "w").close()

    @staticmethod
    def _exited_pid():
        p = subprocess.Popen(["true"])
        p.wait()
        return p.pid if not os.path.exists(f"/proc/{p.pid}") else Segments._beyond_pid_max() + 1

    @staticmethod
    def _beyond_pid_max():
        try:
            with open("/proc/sys/kernel/pid_max") as f:
                return int(f.read()) + 1
        except OSError:
            return 4194305

    def env(self):
        return dict(os.environ, MEMTOP_SHM_DIR=self.dir)

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait()
