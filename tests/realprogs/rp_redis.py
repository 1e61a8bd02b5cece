#!/usr/bin/env python3
"""Real program: redis-server (Debian's) under libmemtop.so, a client that
grows the keyspace steadily (SET of new keys, RPUSH to lists) with
benchmark-like churn (the same 100 keys overwritten again and again).
`memtop -p PID --batch -s leak` must rank a keyspace-growth site first, and
its LOCATION must be a Redis function that is not one of zmalloc's
wrappers (zmalloc, zrealloc_usable, zcalloc_num, ztrymalloc_usable_internal,
...): the name rule recognises those without MEMTOP_SKIP_FUNCS (issue 14).
The server listens on 127.0.0.1 at a free port, saves nothing, and is
ended by the test; every loop is bounded."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import SKIP, need, rows_of  # noqa: E402

ROUNDS = 20
NEW_KEYS = 2000      # per round: the keyspace grows by this many keys
CHURN = 2000         # per round: overwrites of the same 100 keys
WRAPPER = re.compile(r"^_?z\w*(alloc|free)", re.I)


def fail(msg):
    print("FAIL rp_redis.py: " + msg)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def connect(port, proc):
    for _ in range(100):  # 10 s at most
        if proc.poll() is not None:
            fail("redis-server exited with %s" % proc.returncode)
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            time.sleep(0.1)
    fail("redis-server does not listen on port %d" % port)


def pipeline(sock, cmds):
    """Sends cmds, reads as many replies (each one line: +OK or :n)."""
    sock.sendall(b"".join(cmds))
    got = b""
    while got.count(b"\r\n") < len(cmds):
        chunk = sock.recv(1 << 20)
        if not chunk:
            fail("redis-server closed the connection")
        got += chunk
    if b"-ERR" in got:
        fail("redis-server answered an error: %r" % got[:200])


def drive(sock):
    key = 0
    for r in range(ROUNDS):
        cmds = []
        for _ in range(NEW_KEYS):
            cmds.append(resp("SET", "key:%d" % key, "v" * 100))
            key += 1
        cmds += [resp("RPUSH", "list:%d" % (r % 10), "e" * 50) for _ in range(200)]
        pipeline(sock, cmds)
        pipeline(sock, [resp("SET", "tmp:%d" % (i % 100), "x" * 200) for i in range(CHURN)])
        time.sleep(0.3)
    return key


def main():
    (redis,) = need("redis-server")
    lib, memtop = os.environ.get("MTP_LIB"), os.environ.get("MTP_MEMTOP")
    if not lib or not memtop:
        print("SKIP: MTP_LIB / MTP_MEMTOP not set")
        return SKIP
    work = os.path.join(os.environ.get("MTP_WORK", "/tmp"), "redis")
    shutil.rmtree(work, ignore_errors=True)
    shm = os.path.join(work, "shm")
    os.makedirs(shm, mode=0o700)
    port = free_port()
    env = dict(os.environ, LD_PRELOAD=lib, MEMTOP_SHM_DIR=shm)
    env.pop("MEMTOP_SKIP_FUNCS", None)
    proc = subprocess.Popen([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", work],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    try:
        sock = connect(port, proc)
        keys = drive(sock)
        sock.close()
        menv = dict(os.environ, MEMTOP_SHM_DIR=shm)
        menv.pop("MEMTOP_SKIP_FUNCS", None)
        out = subprocess.run([memtop, "-p", str(proc.pid), "--batch", "-n", "1", "-s", "leak",
                              "--top", "5"], env=menv, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if out.returncode != 0:
        fail("memtop exited %d:\n%s%s" % (out.returncode, out.stdout, out.stderr))
    rows = rows_of(out.stdout)
    if not rows:
        fail("no rows in:\n" + out.stdout)
    top = rows[0]
    func = top["where"].split(" (")[0]
    print(out.stdout)
    if WRAPPER.match(func):
        fail("the first row's LOCATION is a zmalloc wrapper: %r" % top["where"])
    if not re.match(r"^[A-Za-z_]\w*$", func):
        fail("the first row's LOCATION is not a Redis function: %r" % top["where"])
    if top["blocks"] < keys // 2 or not top["growth"].startswith("+"):
        fail("the first row is not a keyspace-growth site (%d keys added): %r" % (keys, top))
    print("ok: -s leak ranks %s first (%d blocks, %s) after %d keys" %
          (top["where"], top["blocks"], top["growth"], keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
