"""tuilib.py -- shared helpers of memtop's interactive-viewer tests (python3, stdlib only).

Why it exists: every test in tests/tui drives the real `memtop` screen inside
a private tmux server (send-keys in, capture-pane out) and needs the same
plumbing: a private work directory with its own MEMTOP_SHM_DIR and TMPDIR, a
tmux server on a socket of its own (so tests run side by side with ctest -j2),
polling the screen for a text with a clear failure message that shows the last
screen, parsing the table's rows, and cleaning up -- the tmux server and every
process the test started -- even when an assertion fails.

A test script defines test(t) taking a Tui and calls tuilib.main(test, doc).
"""

import argparse
import gzip
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import e2elib  # noqa: E402  (the JSON snapshot shape check is shared with tests/e2e)

TestFailure = e2elib.TestFailure
fail = e2elib.fail
check = e2elib.check

WAIT_S = 20.0  # default patience for anything to appear on screen
STEP_S = 0.1
PROMPT = "TUIPROMPT$"
# The table's numeric columns, in order, as the heading names them.
COLUMNS = ["LIVE", "BLOCKS", "GROWTH/s", "ALLOC/s", "TEMP%", "LEAK"]


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--memtop", required=True, help="the memtop executable")
    p.add_argument("--preload", required=True, help="libmemtop.so")
    p.add_argument("--demo", required=True, help="memtop-demo")
    p.add_argument("--workdir", required=True, help="private scratch directory (wiped)")
    p.add_argument("--tmux", default="tmux", help="the tmux executable")
    p.add_argument("--mode", help="a variant of the test, for scripts that have several")
    p.add_argument("--exact", help="memtop-exact (the tests that need it say so)")
    p.add_argument("--call-paths", help="memtop-call-paths (the call tree tests)")
    p.add_argument("--same-site", help="memtop-same-site (check_same_site)")
    p.add_argument("--cut-stack", help="memtop-cut-stack (check_cut_stack)")
    p.add_argument("--lost-file", help="dat_lost_file (check_replay_drops)")
    return p.parse_args()


def display_width(line):
    """Terminal columns a line takes (wide characters count 2)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


BYTES_RE = re.compile(r"([+-]?)([\d.]+) ?(B|KiB|MiB|GiB|TiB)")


def parse_bytes(text):
    """'1.0 MiB' -> 1048576.0, '+20.0 KiB' -> 20480.0, '0 B' -> 0.0."""
    m = BYTES_RE.fullmatch(text.strip())
    check(m, "not a byte figure: %r" % text)
    mult = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m.group(3)]
    v = float(m.group(2)) * mult
    return -v if m.group(1) == "-" else v


def parse_count(text):
    """'256' -> 256.0, '+97' -> 97.0, '1.2k' -> 1200.0."""
    m = re.fullmatch(r"([+-]?)([\d.]+)([kMG]?)", text.strip())
    check(m, "not a count: %r" % text)
    v = float(m.group(2)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(3)]
    return -v if m.group(1) == "-" else v


class Row:
    """One data row of the table: cells by heading name, and the location."""

    def __init__(self, cells, location, text):
        self.cells = cells
        self.location = location
        self.text = text

    def __repr__(self):
        return "Row(%r)" % self.text


def find_heading(lines):
    """Index of the table's heading line (the one naming LIVE ... LEAK), or None.
    A heading may carry the baseline's delta mark and a sampled target's "~"."""
    for i, line in enumerate(lines):
        if all(re.search(r"(^|\s|\u0394|d|~)" + re.escape(c) + r"(\s|$)", line)
               for c in ("BLOCKS", "ALLOC/s", "TEMP%", "LEAK")) and "LIVE" in line:
            return i
    return None


def parse_table(screen):
    """(heading line, [Row...]) of the table on screen; rows end at the first line
    whose LIVE cell is not a byte figure (a blank line, a message)."""
    lines = screen.split("\n")
    h = find_heading(lines)
    if h is None:
        return None, []
    heading = lines[h]
    # Each numeric heading is right-aligned to its column's end.
    ends, pos = [], 0
    for c in COLUMNS:
        m = re.compile(r"\S*" + re.escape(c)).search(heading, pos)
        if not m:
            return heading, []
        ends.append(m.end())
        pos = m.end()
    rows = []
    for line in lines[h + 1:]:
        cells, start = {}, 0
        for c, end in zip(COLUMNS, ends):
            cells[c] = line[start:end].strip()
            start = end
        if not BYTES_RE.fullmatch(cells["LIVE"]):
            break  # a blank line, or a message such as "no rows match"
        rows.append(Row(cells, line[ends[-1]:].strip(), line))
    return heading, rows


def row_for(rows, name):
    for r in rows:
        if name in r.location:
            return r
    return None


def shown_bytes_match(text, exact):
    """Whether a byte figure on screen ('80.0 KiB') is `exact` bytes, within
    the figure's rounding (one decimal of its unit; plain bytes exactly)."""
    m = BYTES_RE.fullmatch(text.strip())
    if not m:
        return False
    unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m.group(3)]
    slack = 0.5 if unit == 1 else 0.05 * unit + 0.5
    return abs(parse_bytes(text) - exact) <= slack


def header_line(screen, i):
    """Line i of the screen (0: the process and state, 3: recording / file)."""
    lines = screen.split("\n")
    return lines[i] if i < len(lines) else ""


def frames_key(trace):
    """A trace of a JSON snapshot, identified by its frames (module, offset,
    function, inlined) -- ids may differ between two snapshots, frames not."""
    return tuple((f.get("module"), f.get("offset"), f.get("function"), f.get("inlined"))
                 for f in trace["frames"])


class Tui:
    """One test: its work directory, environment, tmux server and cleanup."""

    def __init__(self, args, name):
        self.args = args
        self.name = name
        self.workdir = os.path.abspath(args.workdir)
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        self.shm_dir = self.path("shm")
        self.tmp_dir = self.path("tmp")
        os.mkdir(self.shm_dir, 0o700)
        os.mkdir(self.tmp_dir, 0o700)
        # A path unique to this test: pgrep-able argv[0] of every demo it starts.
        # Short and under /tmp, not the work directory: the header and the
        # picker's command column cut a long build path before "memtop-demo".
        self.demo_dir = tempfile.mkdtemp(prefix="mt-")
        self.demo = os.path.join(self.demo_dir, "memtop-demo")
        os.symlink(os.path.abspath(args.demo), self.demo)
        self.memtop = os.path.abspath(args.memtop)
        self.env = {k: v for k, v in os.environ.items()
                    if not (k.startswith("MEMTOP_") or k.startswith("TMUX") or
                            k.startswith("LC_") or k in ("LD_PRELOAD", "LANG", "LANGUAGE"))}
        self.env.update(MEMTOP_SHM_DIR=self.shm_dir, TMPDIR=self.tmp_dir, LANG="C.UTF-8",
                        LC_ALL="C.UTF-8", HISTFILE="/dev/null",
                        HOME=self.workdir)
        self.socket = "memtop-tui-%s-%d" % (name, os.getpid())
        self.conf = self.path("tmux.conf")
        with open(self.conf, "w") as f:
            # No status line: the pane is exactly the window's size.
            f.write("set -g status off\nset -g remain-on-exit on\n"
                    "set -g default-terminal screen\nset -g history-limit 100\n")
        self.children = []  # background processes this test started (Popen)
        self.started = False
        self.session = None
        self.socket_path = None
        self.nsessions = 0

    def path(self, name):
        return os.path.join(self.workdir, name)

    # -- tmux ------------------------------------------------------------
    def tmux(self, *argv, check_rc=True, env=None):
        cmd = [self.args.tmux, "-L", self.socket, "-f", self.conf] + [str(a) for a in argv]
        p = subprocess.run(cmd, env=env or self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        if check_rc and p.returncode != 0:
            fail("%s failed (%d): %s" % (shlex.join(cmd), p.returncode,
                                         p.stderr.decode(errors="replace").strip()))
        return p

    def start(self, cmd, width=100, height=30, wrap=True, **env):
        """Starts cmd (a list, or a shell string) in a new tmux session of the
        test's server; later calls replace the session.  With wrap, cmd runs
        under `sh -c 'cmd; echo $? > FILE'` so that exit_status() can read its
        status (tmux's #{pane_dead_status} is sometimes left empty: tmux does
        not always reap the pane's process)."""
        old = self.session if self.started else None
        self.nsessions += 1
        self.session = "s%d" % self.nsessions
        self.rc_file = self.path("exit-status.%d" % self.nsessions)
        e = dict(self.env)
        e.update({k: str(v) for k, v in env.items()})
        shell = cmd if isinstance(cmd, str) else shlex.join(str(c) for c in cmd)
        if wrap:
            shell = "sh -c %s" % shlex.quote("%s; echo $? > %s" % (shell, self.rc_file))
        self.tmux("new-session", "-d", "-s", self.session, "-x", width, "-y", height, "-c",
                  self.workdir, *["-e%s=%s" % kv for kv in env.items()], shell, env=e)
        if not self.started:
            self.socket_path = self.fmt("#{socket_path}")
        self.started = True
        if old:
            self.tmux("kill-session", "-t", old, check_rc=False)

    def start_shell(self, width=100, height=30, **env):
        """An interactive bash with a known prompt, waiting for its first prompt."""
        rc = self.path("bashrc")
        with open(rc, "w") as f:  # only a known prompt: nothing from the user's set-up
            f.write("PS1='%s '\nunset PROMPT_COMMAND\n" % PROMPT)
        self.start(["bash", "--noprofile", "--rcfile", rc, "-i"], width, height, wrap=False,
                   **env)
        self.wait_for(lambda s: s.rstrip().endswith(PROMPT), "the shell's prompt " + PROMPT)

    def run_in_shell(self, line):
        self.keys_literal(line)
        self.keys("Enter")

    def screen(self, joined=False):
        """The pane's text; joined: lines the terminal wrapped are joined (for
        a shell's output; never for memtop's screen, whose full-width rows
        tmux may flag as wrapped)."""
        # tmux can capture a frame half drawn: take the text once two captures
        # a moment apart agree (or the last of a few tries).
        argv = ["capture-pane", "-p", "-t", self.session] + (["-J"] if joined else [])
        text = self.tmux(*argv).stdout.decode("utf-8", errors="replace")
        for _ in range(4):
            time.sleep(0.03)
            again = self.tmux(*argv).stdout.decode("utf-8", errors="replace")
            if again == text:
                break
            text = again
        return text

    def screen_bytes(self, escapes=False):
        argv = ["capture-pane", "-p", "-t", self.session] + (["-e"] if escapes else [])
        return self.tmux(*argv).stdout

    def keys(self, *keys):
        self.tmux("send-keys", "-t", self.session, *keys)

    def keys_literal(self, text):
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def fmt(self, fmt):
        return self.tmux("display-message", "-p", "-t", self.session, fmt).stdout.decode().strip()

    def pane_pid(self):
        return int(self.fmt("#{pane_pid}"))

    def exit_status(self):
        """None while the started command runs, else its exit status."""
        try:
            with open(self.rc_file) as f:
                text = f.read()
        except OSError:
            return None
        return int(text) if text.endswith("\n") else None

    def alternate_on(self):
        return self.fmt("#{alternate_on}") == "1"

    def resize(self, width, height):
        self.tmux("resize-window", "-t", self.session, "-x", width, "-y", height)

    def size(self):
        w, h = self.fmt("#{pane_width} #{pane_height}").split()
        return int(w), int(h)

    # -- polling ---------------------------------------------------------
    def wait_for(self, what, desc=None, timeout=WAIT_S):
        """Polls the screen until `what` (a text, or a predicate of the screen
        returning a true value) holds; returns the screen (or the predicate's
        value).  On timeout fails with the last screen."""
        pred = (lambda s: what in s) if isinstance(what, str) else what
        desc = desc or repr(what)
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen()
            v = pred(s)
            if v:
                return s if v is True else v
            if time.monotonic() > deadline:
                fail("gave up after %.0fs waiting for %s; last screen:\n%s" %
                     (timeout, desc, frame(s)))
            time.sleep(STEP_S)

    def wait_gone(self, text, timeout=WAIT_S):
        return self.wait_for(lambda s: text not in s, "%r to leave the screen" % text, timeout)

    def wait_rows(self, pred, desc, timeout=WAIT_S):
        """Polls until pred(rows, screen) holds for the parsed table; returns (rows, screen)."""
        def ok(s):
            heading, rows = parse_table(s)
            return (rows, s) if heading is not None and pred(rows, s) else None
        return self.wait_for(ok, desc, timeout)

    def wait_dead(self, timeout=WAIT_S):
        """Waits for the started command to end; returns its exit status."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.exit_status()
            if st is not None:
                return st
            if time.monotonic() > deadline:
                fail("the command did not end within %.0fs; last screen:\n%s" %
                     (timeout, frame(self.screen())))
            time.sleep(STEP_S)

    def wait_prompt_back(self, count, timeout=WAIT_S):
        """Waits until the shell shows its prompt `count` times, the last one at the end."""
        def ok(s):
            return s.count(PROMPT) >= count and s.rstrip().endswith(PROMPT)
        return self.wait_for(ok, "the shell's prompt to come back (%d prompts)" % count, timeout)

    def wait_symbolized(self, timeout=WAIT_S):
        """Waits until the demo's three sites are on screen with their names."""
        def ok(rows, s):
            return all(row_for(rows, f) for f in
                       ("session_log_append", "cache_fill", "handle_request"))
        return self.wait_rows(ok, "the demo's rows (session_log_append, cache_fill, "
                              "handle_request)", timeout)

    # -- processes -------------------------------------------------------
    def start_preloaded_demo(self, seconds):
        """The demo run with LD_PRELOAD directly (not by memtop); waits for its segment."""
        env = dict(self.env, LD_PRELOAD=os.path.abspath(self.args.preload))
        p = subprocess.Popen([self.demo, str(seconds)], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.children.append(p)
        seg = os.path.join(self.shm_dir, "memtop-%d" % p.pid)
        deadline = time.monotonic() + WAIT_S
        while not (os.path.exists(seg) and os.path.getsize(seg) > 0):
            check(p.poll() is None, "the preloaded demo exited (%s) early" % p.returncode)
            check(time.monotonic() < deadline, "segment %s did not appear" % seg)
            time.sleep(STEP_S)
        return p

    def procs_with_argv0(self, argv0):
        """Pids of live (not zombie) processes whose argv[0] is argv0."""
        pids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    a0 = f.read().split(b"\0")[0].decode(errors="replace")
                with open("/proc/%s/stat" % d) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if a0 == argv0 and state != "Z":
                pids.append(int(d))
        return pids

    def procs_of_test(self):
        """Pids of live processes whose command line mentions this test's work
        directory or its demo's directory (mentions_dir)."""
        pids = []
        keys = (self.workdir.encode(), self.demo_dir.encode())
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == os.getpid():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmdline = f.read()
                    if any(mentions_dir(cmdline, k) for k in keys):
                        pids.append(int(d))
            except OSError:
                continue
        return pids

    def wait_no_demo(self, timeout=WAIT_S):
        deadline = time.monotonic() + timeout
        while True:
            left = self.procs_with_argv0(self.demo)
            if not left:
                return
            if time.monotonic() > deadline:
                fail("memtop-demo still runs (pids %s) %.0fs after memtop ended" %
                     (left, timeout))
            time.sleep(STEP_S)

    def record_demo(self, seconds):
        """memtop-demo run `seconds` with MEMTOP_RECORD=demo-%p.dat (recorded
        from its start, not under memtop); the recording's name in the work
        directory."""
        env = dict(self.env, LD_PRELOAD=os.path.abspath(self.args.preload),
                   MEMTOP_RECORD=self.path("demo-%p.dat"))
        p = subprocess.run([self.demo, str(seconds)], env=env, cwd=self.workdir,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=seconds + 60)
        check(p.returncode == 0, "the recorded demo exited %d: %s" % (p.returncode, p.stderr))
        files = [f for f in os.listdir(self.workdir) if re.fullmatch(r"demo-\d+\.dat", f)]
        check(len(files) == 1, "expected one demo-PID.dat in %s, found %s" % (self.workdir, files))
        return files[0]

    def run_memtop(self, argv, timeout=120):
        """memtop ARGV without a terminal (stdin /dev/null): (status, stdout, stderr)."""
        p = subprocess.run([self.memtop] + [str(a) for a in argv], env=self.env,
                           cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return (p.returncode, p.stdout.decode(errors="replace"),
                p.stderr.decode(errors="replace"))

    def export_status(self, key, ext, taken, complete, tries=3):
        """Presses KEY (an export) and waits for the status line to say
        "exported PATH" (PATH ending in EXT) naming a file not in `taken`
        (a set; PATH is added).  Returns PATH as shown.

        The status line shows it for 5 s: a test starved that long after
        the export ended (a loaded machine) sees neither "exporting" nor
        "exported", and a new finished file (complete(absolute path) is
        true) that the line no longer names.  Then KEY is pressed again (at
        most `tries` times in all): each try still asserts that the line
        names the file.  Export names have a one-second stamp, so each
        press first waits for the second of the previous export to pass."""
        shown_re = re.compile(r"exported (\S+%s)" % re.escape(ext))
        for attempt in range(1, tries + 1):
            last = getattr(self, "_last_export_s", None)
            while last is not None and int(time.time()) <= last:
                time.sleep(0.05)
            before = set(os.listdir(self.workdir))
            self.keys(key)
            self._last_export_s = int(time.time())
            deadline = time.monotonic() + WAIT_S
            while True:
                s = self.screen()
                for m in shown_re.finditer(s):
                    p = os.path.normpath(os.path.join(self.workdir, m.group(1)))
                    if p not in taken:
                        self._last_export_s = int(time.time())
                        taken.add(p)
                        return m.group(1)
                new = [os.path.join(self.workdir, n) for n in
                       set(os.listdir(self.workdir)) - before if n.endswith(ext)]
                if ("exporting" not in s and "exported" not in s and
                        any(complete(n) for n in new)):
                    print("try %d: the status line's 'exported' came and went unseen; "
                          "pressing %s again" % (attempt, key))
                    break
                if time.monotonic() > deadline:
                    fail("gave up after %.0fs waiting for 'exported <a new path>' after %s; "
                         "last screen:\n%s" % (WAIT_S, key, frame(s)))
                time.sleep(STEP_S)
        fail("the status line's 'exported <path>' after %s went unseen %d times" % (key, tries))

    def export_key(self, taken):
        """Presses `e` and waits for "exported PATH" naming a file not in
        `taken` (a set; PATH is added): export_status.  Returns (absolute
        path, the parsed JSON)."""
        shown = self.export_status("e", ".json", taken, json_complete)
        path = os.path.normpath(os.path.join(self.workdir, shown))
        check(os.path.isfile(path), "the status line names %s, which does not exist" % path)
        return path, e2elib.load_json(path)

    def default_file(self, shown, pid, ext, where):
        """The absolute path of SHOWN, checked to be memtop-PID-YYYYmmdd-HHMMSS<EXT>
        in memtop's working directory, an existing file (WHERE named it)."""
        path = os.path.normpath(os.path.join(self.workdir, shown))
        check(os.path.dirname(path) == self.workdir and
              re.fullmatch(r"memtop-%d-\d{8}-\d{6}%s" % (pid, re.escape(ext)),
                           os.path.basename(path)),
              "unexpected path %r (expected memtop-%d-YYYYmmdd-HHMMSS%s in memtop's working "
              "directory %s)" % (shown, pid, ext, self.workdir))
        check(os.path.isfile(path), "%s names %s, which does not exist" % (where, path))
        return path

    def record_key(self, key):
        """Waits for RUNNING and 'Rec off' in the header, presses KEY (r or R)
        and waits for '● REC <path> <size>'; checks the file is
        memtop-PID-YYYYmmdd-HHMMSS.dat in memtop's working directory, mode
        0600.  Returns (the path shown, its absolute path)."""
        s = self.wait_for(lambda s: "RUNNING" in header_line(s, 0) and
                          "Rec off" in header_line(s, 3), "RUNNING and 'Rec off' in the header")
        pid = int(re.search(r"memtop pid (\d+)", s).group(1))
        self.keys(key)
        rec_re = re.compile(r"● REC (\S+\.dat) ([\d.]+ ?(?:B|KiB|MiB))")
        m = self.wait_for(lambda s: rec_re.search(header_line(s, 3)),
                          "'● REC <path> <size>' after %s" % key)
        shown = m.group(1)
        dat = self.default_file(shown, pid, ".dat", "the header")
        mode = os.stat(dat).st_mode & 0o7777
        check(mode == 0o600, "the recording's mode is %04o, expected 0600" % mode)
        return shown, dat

    def children_of(self, pid):
        p = subprocess.run(["pgrep", "-P", str(pid)], stdout=subprocess.PIPE, text=True)
        return [int(x) for x in p.stdout.split()]

    def cleanup(self):
        if self.started:
            self.tmux("kill-server", check_rc=False)
            if self.socket_path:  # tmux leaves its socket file behind
                try:
                    os.unlink(self.socket_path)
                except OSError:
                    pass
        for p in self.children:
            if p.poll() is None:
                p.kill()
            p.wait()
        # Whatever this test launched through memtop (by pid; all mention the workdir).
        for pid in self.procs_of_test():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.demo_dir, ignore_errors=True)


def frame(screen):
    """A screen, framed so its edges and blank lines are visible in a failure message."""
    lines = screen.split("\n")
    return "\n".join("|" + line for line in lines)


def mentions_dir(cmdline, d):
    """True if one of the NUL-separated arguments of cmdline (bytes) is the
    directory d (bytes), a path under it, or ends with it (--opt=DIR).  Not
    a mere substring: tui_export's work directory .../work/export is the
    start of tui_export_pprof's .../work/export_pprof, and tui_export's
    cleanup killed that test when the two ran side by side (ctest -j2)."""
    return any(a == d or a.endswith(b"=" + d) or d + b"/" in a for a in cmdline.split(b"\0"))


def json_complete(path):
    """True if the file at path is whole JSON (an export finished writing)."""
    try:
        with open(path) as f:
            json.load(f)
        return True
    except (OSError, ValueError):
        return False


def gzip_complete(path):
    """True if the file at path is a whole gzip stream (its trailer read)."""
    try:
        with gzip.open(path, "rb") as f:
            while f.read(1 << 16):
                pass
        return True
    except (OSError, EOFError):
        return False


def main(test_fn, description):
    """Runs test_fn(tui); prints PASS or FAIL with the reason; exits 0/1."""
    args = parse_args(description)
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    check_name = name[len("check_"):] if name.startswith("check_") else name
    if shutil.which(args.tmux) is None:
        print("FAIL %s: tmux is not installed (scripts/install-deps.sh installs it)" % name)
        sys.exit(1)
    # The work directory's name tells apart variants of one script (quit_q, quit_hup).
    t = Tui(args, os.path.basename(os.path.normpath(args.workdir)) or check_name)
    try:
        test_fn(t)
    except TestFailure as e:
        print("FAIL %s: %s" % (name, e), flush=True)
        sys.exit(1)
    finally:
        t.cleanup()
    print("PASS %s" % name, flush=True)
    sys.exit(0)
