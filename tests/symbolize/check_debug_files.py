#!/usr/bin/env python3
"""Stripped modules named from separate debug info (issue 13).

A program stripped of every symbol (strip --strip-all) whose debug file
(objcopy --only-keep-debug) memtop must find: by build-id under
/usr/lib/debug/.build-id/xx/yyyy.debug; by .gnu_debuglink next to the
program; by build-id under the target's own root only (its mount
namespace, as in a container); from its .gnu_debugdata (MiniDebugInfo:
function names only); from a debuginfod-compatible HTTP server on
127.0.0.1 (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH in the work dir) for a
program in a directory another user can write to; and with a server that
never answers, the export still ends (bounded: DEBUGINFOD_MAXTIME unset,
so memtop's own 10 s) and the frames say "no symbols (debuginfod timed
out)".

Runs as root in a private mount namespace (it re-executes itself under
`unshare -m`) with a tmpfs over /usr/lib/debug, so the host's debug
directory is never written; skipped (77) without root or unshare."""
import http.server
import lzma
import os
import shutil
import socket
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import symlib  # noqa: E402
from symlib import check  # noqa: E402

NAMES = {"exported_make", "static_make"}
INSIDE = "MEMTOP_TEST_DEBUG_NS"
STAY = "--stay=120"


def frames_of(snap, exe):
    return [fr for t in snap["traces"] for fr in t["frames"]
            if symlib.same_module(fr["module"], exe)]


def named(snap, exe, what, lines=True):
    frames = frames_of(snap, exe)
    names = {fr["function"] for fr in frames}
    check(NAMES <= names, "%s: functions of %s not named (got %r, reasons %r)" %
          (what, exe, sorted(n for n in names if n),
           sorted({str(fr["unresolved"]) for fr in frames})))
    if lines:
        check(all(fr["file"] and fr["file"].endswith("sym_c.c") for fr in frames
                  if fr["function"] in NAMES), "%s: no source line from the debug file" % what)
    print("ok: %s: %d frames named" % (what, len(frames)))


def build_id(path):
    out = symlib.run(["readelf", "-n", path]).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    symlib.fail("no build-id in %s" % path)


def build(a, name):
    """sym_c.c with a build-id of its own (each case's debug file must be
    found for its own reason, never as another case's)."""
    exe = os.path.join(a.workdir, "debug", name + ".full")
    bid = "0x" + os.urandom(20).hex()
    symlib.run([a.cc, "-O2", "-g", "-Wl,--build-id=" + bid, "-o", exe,
                os.path.join(a.source_dir, "sym_c.c")])
    return exe


def stripped_pair(a, name, where=None):
    """A --strip-all build (in where) and its --only-keep-debug file
    (elsewhere: libdwfl also tries <program>.debug next to it)."""
    exe = build(a, name)
    where = where or a.workdir
    prog = os.path.join(where, name)
    debug = os.path.join(a.workdir, "debug", name + ".debug")
    symlib.run(["objcopy", "--only-keep-debug", exe, debug])
    shutil.copy(exe, prog)
    symlib.run(["strip", "--strip-all", prog])
    return prog, debug


def build_id_dir(root, bid):
    d = os.path.join(root + "/usr/lib/debug/.build-id", bid[:2])
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, bid[2:] + ".debug")


def by_build_id(a):
    prog, debug = stripped_pair(a, "by_build_id")
    snap = symlib.export(a, "by_build_id_bare", [prog])
    check(not NAMES & {fr["function"] for fr in frames_of(snap, prog)},
          "a --strip-all program is named without its debug file")
    shutil.copy(debug, build_id_dir("", build_id(prog)))
    named(symlib.export(a, "by_build_id", [prog]), prog, "debug file by build-id")


def by_debuglink(a):
    prog, debug = stripped_pair(a, "by_link")
    link = os.path.join(a.workdir, "by_link.dbg")
    shutil.move(debug, link)
    symlib.run(["objcopy", "--add-gnu-debuglink=" + link, prog])
    named(symlib.export(a, "by_link", [prog]), prog, "debug file by .gnu_debuglink")


def by_debugdata(a):
    exe = build(a, "minidebug")
    prog = os.path.join(a.workdir, "minidebug")
    mini = os.path.join(a.workdir, "mini.elf")
    symlib.run(["objcopy", "--strip-debug", "--remove-section=.comment", exe, mini])
    with open(mini, "rb") as f, open(mini + ".xz", "wb") as out:
        out.write(lzma.compress(f.read(), format=lzma.FORMAT_XZ))
    shutil.copy(exe, prog)
    symlib.run(["strip", "--strip-all", prog])
    symlib.run(["objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", prog])
    named(symlib.export(a, "minidebug", [prog]), prog, ".gnu_debugdata", lines=False)


def in_target_root(a):
    """The debug file only in the target's mount namespace."""
    prog, debug = stripped_pair(a, "in_container")
    dest = build_id_dir("", build_id(prog)).replace(a.workdir, "")
    inner = ("mount -t tmpfs memtop-dbg /usr/lib/debug && mkdir -p %s && cp %s %s && exec %s %s"
             % (os.path.dirname(dest), debug, dest, prog, STAY))
    proc = symlib.start_live(a, ["sh", "-c", inner], wrap=["unshare", "-m"])
    try:
        snap, _ = symlib.export_live(a, "in_container", proc.pid, prog)
        named(snap, prog, "debug file by build-id under the target's root")
    finally:
        symlib.stop(proc)
    check(not os.path.exists(dest), "the target's debug tmpfs is visible outside")


class Debuginfod(http.server.BaseHTTPRequestHandler):
    files = {}
    asked = []

    def do_GET(self):
        Debuginfod.asked.append(self.path)
        parts = self.path.strip("/").split("/")
        body = None
        if len(parts) == 3 and parts[0] == "buildid" and parts[2] == "debuginfo":
            body = Debuginfod.files.get(parts[1])
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def from_debuginfod(a):
    """A program in a sticky world-writable directory (another user could
    plant files there): its debug file comes from the server only."""
    shared = os.path.join(a.workdir, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    prog, debug = stripped_pair(a, "served", where=shared)
    with open(debug, "rb") as f:
        Debuginfod.files[build_id(prog)] = f.read()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Debuginfod)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = dict(a.env, DEBUGINFOD_URLS="http://127.0.0.1:%d" % server.server_address[1],
                   DEBUGINFOD_CACHE_PATH=os.path.join(a.workdir, "cache"))
        env.pop("DEBUGINFOD_MAXTIME", None)
        out = os.path.join(a.workdir, "served.json")
        symlib.run([a.memtop, "--export", out, "--", prog], env=env)
        named(symlib.load(out), prog, "debug file from debuginfod")
        check(any(build_id(prog) in p for p in Debuginfod.asked),
              "the server was not asked: %r" % Debuginfod.asked)
    finally:
        server.shutdown()


def silent_server(a):
    """A server that accepts connections and never answers."""
    prog, _ = stripped_pair(a, "unanswered")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        env = dict(a.env, DEBUGINFOD_URLS="http://127.0.0.1:%d" % sock.getsockname()[1],
                   DEBUGINFOD_CACHE_PATH=os.path.join(a.workdir, "cache-silent"))
        env.pop("DEBUGINFOD_MAXTIME", None)
        env.pop("DEBUGINFOD_TIMEOUT", None)
        out = os.path.join(a.workdir, "unanswered.json")
        # libdebuginfod's own bound would be 90 s without progress, per module
        symlib.run([a.memtop, "--export", out, "--", prog], env=env, timeout=60)
        frames = frames_of(symlib.load(out), prog)
        reasons = {fr["unresolved"] for fr in frames}
        check(frames and reasons == {"no symbols (debuginfod timed out)"},
              "frames of a module the silent server was asked for: %r" % reasons)
        print("ok: a server that never answers: export ended, %d frames say %r" %
              (len(frames), reasons.pop()))
    finally:
        sock.close()


def main():
    a = symlib.setup(__doc__)
    if os.geteuid() != 0 or not shutil.which("unshare"):
        symlib.skip("needs root and unshare (a private /usr/lib/debug)")
    if os.environ.get(INSIDE) != "1":
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
        if probe.returncode != 0:  # a chroot: / is no mount point, nothing can be private
            symlib.skip("no private mount namespace here: %s" % probe.stderr.strip())
        os.makedirs("/usr/lib/debug", exist_ok=True)  # a bare machine has none yet
        p = subprocess.run(["unshare", "-m", "sh", "-c",
                            "mount -t tmpfs memtop-dbg /usr/lib/debug && exec \"$@\"", "sh",
                            sys.executable] + sys.argv,
                           env=dict(os.environ, **{INSIDE: "1"}))
        sys.exit(p.returncode)
    for tool in ("objcopy", "strip", "readelf"):
        if not shutil.which(tool):
            symlib.skip("%s (binutils) is not installed" % tool)
    os.makedirs(os.path.join(a.workdir, "debug"))
    cases = [by_build_id, by_debuglink, by_debugdata, in_target_root, from_debuginfod,
             silent_server]
    only = os.environ.get("SYM_CASES")  # e.g. SYM_CASES=silent_server, to run one alone
    for case in cases:
        if not only or case.__name__ in only.split(","):
            case(a)
    symlib.passed()


main()
