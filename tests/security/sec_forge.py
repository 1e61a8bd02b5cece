#!/usr/bin/env python3
"""sec_forge.py -- another user cannot pass a segment off as someone's process.

Why it exists: the reader used to trust memtop-<pid> by its name.  User A
copies a real segment (made by a preloaded memtop-demo of A's) to
memtop-<pid> of a `sleep` run by user B and of one run by root, and patches
the header's pid and start time so that it looks alive.  Root's `--list`
must mark those rows "foreign" instead of showing the made-up process,
`memtop -p` must refuse with a clear message and exit non-zero, and no
control command (publish-now of --export) may be written into A's file.  A
forged segment of a pid with no process is not trusted either.
"""

import os
import shutil
import re
import struct
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check  # noqa: E402

PID_OFF, TICKS_OFF, HEADER_BYTES = 32, 48, 16384  # mt_shm_header (src/ipc/shm_layout.h)

PATCH = """
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(%d); f.write(struct.pack("<i", int(sys.argv[2])))
    f.seek(%d); f.write(struct.pack("<Q", int(sys.argv[3])))
""" % (PID_OFF, TICKS_OFF)


def start_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def header(path):
    with open(path, "rb") as f:
        return f.read(HEADER_BYTES)


def row_of(out, pid):
    rows = [ln for ln in out.splitlines() if re.match(r"\s*%d\s" % pid, ln)]
    return rows[0] if len(rows) == 1 else None


def forge(attacker, env, shm, real, pid, ticks):
    fake = os.path.join(shm, "memtop-%d" % pid)
    for cmd in (["cp", "--sparse=always", real, fake],
                ["python3", "-c", PATCH, fake, str(pid), str(ticks)]):
        p = seclib.run_as(attacker, cmd, env)
        check(p.returncode == 0, "the attacker's %s failed: %s" % (cmd[0], p.stderr))
    return fake


def setuid_sleep(ctx, attacker, env):
    """A setuid-root sleep started by the attacker (real uid A, effective
    uid 0): a file of A's must not pass for that root process's segment.
    None where the file system ignores setuid bits."""
    path = ctx.path("suid-sleep")
    shutil.copy(shutil.which("sleep"), path)
    os.chown(path, 0, 0)
    os.chmod(path, 0o4755)
    proc = seclib.start_as(attacker, [path, "300"], env)
    def uids():
        with open("/proc/%d/status" % proc.pid) as f:
            line = [ln for ln in f if ln.startswith("Uid:")][0]
        return [int(v) for v in line.split()[1:3]]
    seclib.e2elib.wait_for(lambda: uids()[1] == 0 or
                           os.path.basename(os.readlink("/proc/%d/exe" % proc.pid)) ==
                           "suid-sleep", "the setuid sleep to start")
    if uids() != [attacker.uid, 0]:
        print("note: setuid bits are ignored here (uids %r): no setuid case" % uids())
        proc.kill()
        proc.wait()
        return None
    return proc


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (attacker, victim_user):
        shm = seclib.shared_dir(ctx, "shm")
        env = ctx.env_with(MEMTOP_SHM_DIR=shm)
        demo = seclib.start_demo(ctx, args, attacker, shm)
        sleeps = [seclib.start_as(victim_user, ["sleep", "300"], env),
                  seclib.start_as(None, ["sleep", "300"], env)]
        suid = setuid_sleep(ctx, attacker, env)  # the attacker's real uid, root's effective
        if suid:
            sleeps.append(suid)
        try:
            real = os.path.join(shm, "memtop-%d" % demo.pid)
            seclib.e2elib.wait_for(lambda: os.path.exists(real) and os.path.getsize(real) > 0,
                                   "the attacker's demo segment")
            fakes = {s.pid: forge(attacker, env, shm, real, s.pid, start_ticks(s.pid))
                     for s in sleeps}
            gone = 4194302  # no such process
            fakes[gone] = forge(attacker, env, shm, real, gone, 1)
            before = {pid: header(path) for pid, path in fakes.items()}

            p = seclib.run_as(None, [args.memtop, "--list"], env)
            check(p.returncode == 0, "root's --list failed:\n%s" % p.stderr)
            for pid in fakes:
                row = row_of(p.stdout, pid)
                check(row and re.search(r"\sforeign\s", row) and "foreign owner" in row,
                      "root's --list shows the forged memtop-%d as genuine:\n%s" % (pid, p.stdout))
            print("ok: --list: %s" % row_of(p.stdout, sleeps[0].pid).strip())
            check(row_of(p.stdout, demo.pid) and "running" in row_of(p.stdout, demo.pid),
                  "the attacker's own demo is no longer listed as running:\n%s" % p.stdout)

            for s in sleeps:
                for cmd in (["--batch", "-n", "1"], ["--export", ctx.path("x.json")]):
                    p = seclib.run_as(None, [args.memtop, "-p", str(s.pid)] + cmd, env)
                    check(p.returncode != 0 and "foreign owner" in p.stderr and
                          "uid %d" % attacker.uid in p.stderr,
                          "root's memtop -p %d %s accepted the forged segment (exit %d):\n%s%s" %
                          (s.pid, cmd[0], p.returncode, p.stdout, p.stderr))
            print("ok: -p says: %s" % p.stderr.strip())
            # the victim cannot read the planted file (0600, the attacker's):
            # it is foreign, not "permission denied: run as that user"
            p = seclib.run_as(victim_user, [args.memtop, "-p", str(sleeps[0].pid), "--batch",
                                            "-n", "1"], env)
            check(p.returncode != 0 and "foreign owner" in p.stderr and
                  "uid %d" % attacker.uid in p.stderr and "run as that user" not in p.stderr,
                  "the victim's memtop -p %d on a planted file it cannot read:\n%s" %
                  (sleeps[0].pid, p.stderr))
            print("ok: the victim's -p says: %s" % p.stderr.strip())
            for pid, path in fakes.items():
                check(header(path) == before[pid],
                      "root's memtop wrote into the attacker's forged memtop-%d" % pid)
            print("ok: nothing written into the forged files")
        finally:
            for s in sleeps + [demo]:
                s.kill()
                s.wait()


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
