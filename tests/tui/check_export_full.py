"""check_export_full.py -- `e` on a full disk leaves no file behind.

Before, `e` with memtop's working directory on a full file system said the
export failed and left memtop-PID-....json there empty or cut.  memtop runs
in a private mount namespace (`unshare -m`, root; skipped otherwise) whose
working directory is a 4 KiB tmpfs; the demo's JSON export is larger.
Asserts: the status line says "export failed: ... No space left on device",
and the directory (read through /proc/PID/cwd, in memtop's namespace) is
empty: neither the export nor its temporary file is left.
"""
import os
import shlex
import subprocess
import sys

import tuilib
from tuilib import check


def test(t):
    if os.geteuid() != 0:
        print("SKIP: needs root to mount a small tmpfs", flush=True)
        sys.exit(77)
    full = t.path("full")
    os.mkdir(full)
    # a chroot or a container may refuse the namespace or the mount: a skip, not a hang
    probe = subprocess.run(["unshare", "-m", "sh", "-c",
                            'mount -t tmpfs -o size=4k memtop-probe "$0"', full],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        print("SKIP: cannot mount a tmpfs in a private mount namespace: %s"
              % probe.stderr.strip(), flush=True)
        sys.exit(77)
    inner = 'mount -t tmpfs -o size=4k memtop-full "$0" && cd "$0" && exec "$1" -- "$2" 60'
    t.start("unshare -m sh -c %s %s %s %s" % (shlex.quote(inner), shlex.quote(full),
                                              shlex.quote(t.memtop), shlex.quote(t.demo)),
            width=250, wrap=False)
    t.wait_symbolized()
    cwd = "/proc/%d/cwd" % int(t.pane_pid())
    check(os.listdir(cwd) == [], "the tmpfs is not empty at start: %s" % os.listdir(cwd))
    t.keys("e")
    s = t.wait_for(lambda s: "export failed" in s and s, "'export failed' on the status line")
    check("No space left on device" in s, "the status line does not say why:\n%s" % s)
    check(os.listdir(cwd) == [], "a failed export left %s" % os.listdir(cwd))


tuilib.main(test, __doc__)
