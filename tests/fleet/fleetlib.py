"""fleetlib.py -- what the tests/fleet scripts share: their extra option
(--leaker), the real tools (skipped with exit 77 when one is missing),
decoding a pprof profile with protoc, and talking to `memtop --serve`.

It builds on tests/e2e/e2elib.py (work directory, MEMTOP_SHM_DIR, running
and stopping programs) rather than repeating it.
"""

import codecs
import gzip
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402
from e2elib import check, fail  # noqa: E402,F401

PROTO_DIR = "/usr/share/gocode/src/github.com/google/pprof/proto"
SKIP = 77


def take_arg(name):
    """Removes `name VALUE` from sys.argv (e2elib's parser does not know the
    options of tests/fleet) and returns VALUE, or None."""
    argv = sys.argv
    if name not in argv:
        return None
    i = argv.index(name)
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


LEAKER = take_arg("--leaker")
UNIT = take_arg("--unit")


def need(tool, package):
    """The path of tool, or the test is skipped (exit 77) naming the package."""
    path = shutil.which(tool)
    if not path:
        print("SKIP: %s not found (Debian package %s; scripts/install-deps.sh)" % (tool, package),
              flush=True)
        sys.exit(SKIP)
    return path


# --- pprof profiles, decoded by protoc ----------------------------------------------------

TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s{}]+))|(\}))')


def parse_textproto(text):
    """protoc's text format as nested dicts: every field a list of values."""
    root, stack, pos = {}, [], 0
    cur = root
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                fail("cannot parse protoc output at: %r" % text[pos:pos + 80])
            break
        pos = m.end()
        if m.group(4):
            cur = stack.pop()
        elif m.group(2) == "{":
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
        else:
            v = m.group(3)
            if v.startswith('"'):
                raw = codecs.escape_decode(v[1:-1].encode("latin-1"))[0]
                v = raw.decode("utf-8", "replace")
            elif v in ("true", "false"):
                v = v == "true"
            else:
                v = int(v)
            cur.setdefault(m.group(1), []).append(v)
    return root


def one(msg, field, default=0):
    return msg.get(field, [default])[0]


def decode_pprof(path):
    """The profile at path (gzip'd profile.proto), decoded by Debian's protoc."""
    protoc = need("protoc", "protobuf-compiler")
    with open(path, "rb") as f:
        raw = f.read()
    check(raw[:2] == b"\x1f\x8b", "%s is not gzip-compressed" % path)
    proc = subprocess.run([protoc, "--decode=perftools.profiles.Profile",
                           "--proto_path=" + PROTO_DIR, "profile.proto"],
                          input=gzip.decompress(raw), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    check(proc.returncode == 0, "protoc --decode failed: %s" % proc.stderr.decode())
    return Profile(parse_textproto(proc.stdout.decode("utf-8")))


class Profile:
    """A decoded profile with its string indices resolved."""

    def __init__(self, p):
        self.raw = p
        self.strings = p.get("string_table", [])
        check(self.strings and self.strings[0] == "", "string_table[0] is not \"\"")
        s = self.s
        self.sample_types = [(s(one(t, "type")), s(one(t, "unit"))) for t in p.get("sample_type", [])]
        self.default_type = s(one(p, "default_sample_type"))
        self.comments = [s(c) for c in p.get("comment", [])]
        self.time_nanos = one(p, "time_nanos")
        self.period = one(p, "period")
        self.duration_nanos = one(p, "duration_nanos")
        self.functions = {one(f, "id"): (s(one(f, "name")), s(one(f, "filename")))
                          for f in p.get("function", [])}
        self.system_names = {one(f, "id"): s(one(f, "system_name")) for f in p.get("function", [])}
        self.mappings = {one(m, "id"): {"file": s(one(m, "filename")),
                                        "build_id": s(one(m, "build_id")),
                                        "start": one(m, "memory_start"),
                                        "limit": one(m, "memory_limit"),
                                        "offset": one(m, "file_offset")}
                         for m in p.get("mapping", [])}
        self.locations = {}
        for loc in p.get("location", []):
            lines = [self.functions[one(ln, "function_id")] + (one(ln, "line"),)
                     for ln in loc.get("line", [])]
            self.locations[one(loc, "id")] = {"address": one(loc, "address"),
                                              "mapping": one(loc, "mapping_id"), "lines": lines}
        self.samples = []
        for smp in p.get("sample", []):
            labels = {s(one(lb, "key")): one(lb, "num") for lb in smp.get("label", [])}
            self.samples.append({"values": smp.get("value", []),
                                 "locations": smp.get("location_id", []), "labels": labels})

    def s(self, i):
        check(0 <= i < len(self.strings), "string index %d out of the table" % i)
        return self.strings[i]


# --- memtop --serve --------------------------------------------------------------------

def free_port():
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, headers=None, timeout=10):
    """(status, content type, body bytes) of a GET."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def start_serve(ctx, args, *extra):
    """Starts `memtop --serve 127.0.0.1:PORT` (ctx's MEMTOP_SHM_DIR); returns
    (process, base url) once it answers."""
    port = free_port()
    cmd = [args.memtop, "--serve", "127.0.0.1:%d" % port] + list(extra)
    proc = subprocess.Popen(cmd, env=ctx.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = "http://127.0.0.1:%d" % port

    def up():
        if proc.poll() is not None:
            fail("%s exited %s: %s" % (e2elib.show_cmd(cmd), proc.returncode, proc.stderr.read()))
        try:
            return http_get(base + "/", timeout=2)[0] == 200
        except OSError:
            return False

    e2elib.wait_for(up, "memtop --serve to answer on %s" % base, timeout=20, step=0.1)
    return proc, base


def metric_samples(text):
    """{(name, frozenset(labels.items())): value} of a text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        check(m, "not a sample line: %r" % line)
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def export_json(ctx, args, pid, name):
    """memtop -p pid --export name.json, loaded."""
    out = ctx.path(name)
    proc = e2elib.run([args.memtop, "-p", str(pid), "--export", out], ctx.env)
    check(proc.returncode == 0, "memtop -p %d --export failed:\n%s" % (pid, e2elib.describe(proc)))
    return e2elib.load_json(out)


def wait_ready(proc, ready, name):
    """Waits until proc writes the file ready; fails if it exits first (its
    stderr read only then: never a blocking read of a live child's)."""
    e2elib.wait_for(lambda: os.path.exists(ready) or proc.poll() is not None,
                    "%s to write %s" % (name, ready))
    if proc.poll() is not None:
        fail("%s exited early (%s): %s" % (name, proc.returncode, proc.stderr.read()))


def start_leaker(ctx, args, ready, blocks=100, hold=0):
    """fleet-leaker under the preload; once ready exists when ready is a path."""
    proc = e2elib.start_preloaded(ctx, [LEAKER, ready or "-", str(blocks), str(hold)])
    if ready:
        wait_ready(proc, ready, "fleet-leaker")
    return proc


def wait_exit(proc, timeout=10):
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
