"""check_export_pprof.py -- `P` writes a pprof heap profile and shows its path.

Asserts: after `P` the status line says "exported <path>"; the file is
memtop-PID-YYYYmmdd-HHMMSS.pb.gz in memtop's working directory, gzip'd,
0600-like (not group/world-writable); decoded by protoc (when installed:
else only its gzip and protobuf framing are checked by size) it has the four
heap sample types and a sample at session_log_append with live bytes.
"""
import gzip
import os
import re
import shutil
import stat
import subprocess

import tuilib
from tuilib import check

PROTO_DIR = "/usr/share/gocode/src/github.com/google/pprof/proto"


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    pid = int(re.search(r"memtop pid (\d+)", t.screen()).group(1))
    shown = t.export_status("P", ".pb.gz", set(), tuilib.gzip_complete)
    path = os.path.normpath(os.path.join(t.workdir, shown))
    check(re.fullmatch(r"memtop-%d-\d{8}-\d{6}\.pb\.gz" % pid, os.path.basename(path)),
          "unexpected export path %r" % path)
    with open(path, "rb") as f:
        raw = gzip.decompress(f.read())
    check(len(raw) > 100, "the profile is only %d bytes" % len(raw))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    check(not mode & (stat.S_IWGRP | stat.S_IWOTH), "the profile is group/world-writable")
    protoc = shutil.which("protoc")
    if not protoc:
        print("protoc missing: profile content not decoded")
        return
    out = subprocess.run([protoc, "--decode=perftools.profiles.Profile",
                          "--proto_path=" + PROTO_DIR, "profile.proto"], input=raw,
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    for name in ("inuse_space", "inuse_objects", "alloc_space", "alloc_objects",
                 "session_log_append"):
        check('"%s"' % name in out, "the decoded profile has no string %r" % name)
    print("ok: P wrote %s (%d bytes unpacked)" % (os.path.basename(path), len(raw)))


tuilib.main(test, __doc__)
