#!/usr/bin/env python3
"""Real program: PostgreSQL (Debian's), a forking server, whole under libmemtop.so.

Why it exists: postgres is what the brief's users run: a postmaster that
forks a process per connection and a handful of helpers (checkpointer,
WAL writer, autovacuum), shared memory, signals everywhere, and initdb,
which runs `postgres --boot` and `--single` through pipes.  All of it runs
preloaded, as the unprivileged user postgres needs (the library is copied
where that user can read it), with one MEMTOP_SHM_DIR:

- initdb succeeds; the server starts and answers; pgbench fills its tables
  (scale 1: 100,000 accounts) and runs 4 clients x 300 transactions with
  no failed transaction, and the bank stays balanced afterwards (the
  accounts' balances sum to the history's deltas, 1,200 history rows);
- while a client sleeps in a query, `memtop --list` shows the postmaster,
  its helpers and that backend (renamed `postgres: ...` after the fork);
  `memtop -p` exports the postmaster and the backend, each tracked (traces
  with frames, allocations counted), exact (no free of a block memtop did
  not see allocated: the backend inherits the postmaster's blocks) and
  self-consistent (live = alloc - free per trace, totals = the traces'
  sums);
- `pg_ctl stop -m fast` ends it cleanly: the postmaster exits 0, no process
  died of a signal (the server log would say "terminated by signal"),
  memtop wrote no warning into it, and no segment is left behind.
"""
import glob
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import SKIP  # noqa: E402
from mtplib import consistency_errors, segments  # noqa: E402

CLIENTS, TRANSACTIONS = 4, 300
MEMTOP_LINE = re.compile(r"^memtop\[\d+\]: ", re.M)  # what libmemtop.so writes (core_log.c)


def fail(msg):
    print("FAIL rp_postgres.py: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def find_bin():
    """Debian's server binaries (/usr/lib/postgresql/N/bin), newest first, or SKIP."""
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "postgres", "pg_ctl",
                                                                  "pgbench", "psql")):
            return d
    print("SKIP: no PostgreSQL server (Debian's postgresql package) installed")
    sys.exit(SKIP)


def server_user():
    """Who runs the server: postgres refuses root, so root plays Debian's postgres user."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        print("SKIP: running as root and no postgres user to run the server as")
        sys.exit(SKIP)


class Pg:
    def __init__(self, bindir, user, work, lib):
        self.bindir, self.user, self.work = bindir, user, work
        self.data = os.path.join(work, "data")
        self.sock = work
        self.shm = os.path.join(work, "shm")
        self.port = 5400 + os.getpid() % 500
        self.env = dict(os.environ, LD_PRELOAD=lib, MEMTOP_SHM_DIR=self.shm, LC_ALL="C",
                        PGHOST=self.sock, PGPORT=str(self.port), PGUSER="tester",
                        PGDATABASE="postgres")
        for k in list(self.env):
            if k.startswith("MEMTOP_") and k != "MEMTOP_SHM_DIR":
                del self.env[k]

    def cmd(self, name):
        return os.path.join(self.bindir, name)

    def as_user(self):
        if not self.user:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def run(self, args, timeout=180, preloaded=True):
        env = self.env if preloaded else {k: v for k, v in self.env.items() if k != "LD_PRELOAD"}
        try:
            return subprocess.run(args, env=env, cwd=self.work, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout,
                                  **self.as_user())
        except subprocess.TimeoutExpired:
            fail("timed out after %d s: %s" % (timeout, " ".join(args)))

    def can_run(self):
        """Whether the server's user can run the server's programs at all."""
        try:
            return self.run([self.cmd("initdb"), "--version"], preloaded=False).returncode == 0
        except PermissionError:
            return False

    def start(self):
        self.log = open(os.path.join(self.work, "server.log"), "w")
        args = [self.cmd("postgres"), "-D", self.data, "-k", self.sock, "-p", str(self.port),
                "-c", "listen_addresses=", "-c", "shared_buffers=16MB", "-c", "fsync=off"]
        self.proc = subprocess.Popen(args, env=self.env, cwd=self.work, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT, **self.as_user())
        for _ in range(300):  # 30 s
            if self.proc.poll() is not None:
                fail("postgres exited %s:\n%s" % (self.proc.returncode, self.server_log()))
            if self.run([self.cmd("psql"), "-Atc", "SELECT 1"], preloaded=False).stdout == "1\n":
                return
            time.sleep(0.1)
        self.proc.kill()  # before its data directory goes
        self.proc.wait()
        fail("postgres does not answer:\n" + self.server_log())

    def sql(self, query):
        p = self.run([self.cmd("psql"), "-v", "ON_ERROR_STOP=1", "-Atc", query])
        check(p.returncode == 0, "psql %r failed (%d): %s" % (query, p.returncode, p.stderr))
        return p.stdout.strip()

    def server_log(self):
        with open(os.path.join(self.work, "server.log"), errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.run([self.cmd("pg_ctl"), "-D", self.data, "-m", "fast", "stop"],
                     preloaded=False)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def memtop_export(memtop, pg, pid, name):
    out = os.path.join(pg.work, name)
    p = subprocess.run([memtop, "-p", str(pid), "--export", out],
                       env=dict(os.environ, MEMTOP_SHM_DIR=pg.shm), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "memtop -p %d --export: %s%s" % (pid, p.stdout, p.stderr))
    with open(out) as f:
        snap = json.load(f)
    tot = snap.get("totals", {})
    check(tot.get("alloc_count", 0) >= 100 and any(t.get("frames") for t in snap["traces"]),
          "%s (pid %d) is not tracked: totals %s" % (name, pid, tot))
    health = snap.get("health") or {}
    check(health.get("exact") is True and health.get("unknown_free_count") == 0,
          "%s (pid %d) is not exact: %s" % (name, pid, health))
    errs = consistency_errors(snap)
    check(not errs, "%s (pid %d) is not self-consistent: %s" % (name, pid, errs))
    return snap


def children(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(c) for c in f.read().split()]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def watch_backend(pg, memtop):
    """A client sleeps in a query; its backend and the postmaster are seen and exported."""
    sleeper = subprocess.Popen([pg.cmd("psql"), "-Atc", "SELECT pg_sleep(300)"],
                               env={k: v for k, v in pg.env.items() if k != "LD_PRELOAD"},
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, **pg.as_user())
    try:
        backend = None
        for _ in range(100):
            found = [c for c in children(pg.proc.pid) if "SELECT" in cmdline(c)]
            if found:
                backend = found[0]
                break
            time.sleep(0.05)
        check(backend, "no backend running the client's SELECT among %s" %
              [cmdline(c) for c in children(pg.proc.pid)])
        time.sleep(1.2)  # a publish after the rename
        p = subprocess.run([memtop, "--list"], env=dict(os.environ, MEMTOP_SHM_DIR=pg.shm),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "memtop --list: %s" % p.stderr)
        rows = {int(m.group(1)): m.group(0) for m in re.finditer(r"^\s*(\d+)\s.*$", p.stdout,
                                                                  re.M)}
        check(pg.proc.pid in rows and backend in rows,
              "--list lacks the postmaster %d or the backend %d:\n%s" %
              (pg.proc.pid, backend, p.stdout))
        check("postgres: " in rows[backend], "the backend's row is not its new title: %r" %
              rows[backend])
        helpers = [c for c in children(pg.proc.pid) if c in rows]
        check(len(helpers) >= 4, "--list shows %d of the postmaster's children:\n%s" %
              (len(helpers), p.stdout))
        be = memtop_export(memtop, pg, backend, "backend.json")
        pm = memtop_export(memtop, pg, pg.proc.pid, "postmaster.json")
        print("ok: --list shows the postmaster and %d of its processes; exports of the "
              "postmaster (%d allocations) and backend %d (%d) are tracked and consistent" %
              (len(helpers), pm["totals"]["alloc_count"], backend, be["totals"]["alloc_count"]),
              flush=True)
    finally:
        sleeper.terminate()  # the client; its backend ends with the connection
        sleeper.wait(timeout=30)


def main():
    bindir = find_bin()
    lib, memtop = os.environ.get("MTP_LIB"), os.environ.get("MTP_MEMTOP")
    if not lib or not memtop:
        print("SKIP: MTP_LIB / MTP_MEMTOP not set")
        return SKIP
    user = server_user()
    # Under /tmp, 0755: the server's user must reach the library (a CI
    # clone's build tree may sit in a private directory).
    work = tempfile.mkdtemp(prefix="memtop-rp-postgres-", dir="/tmp")
    try:
        os.chmod(work, 0o755)
        shutil.copy(lib, os.path.join(work, "libmemtop.so"))
        pg = Pg(bindir, user, work, os.path.join(work, "libmemtop.so"))
        os.mkdir(pg.shm, 0o700)
        if user:
            for path in (work, pg.shm):
                os.chown(path, user.pw_uid, user.pw_gid)
        if user and not pg.can_run():
            print("SKIP: user postgres cannot run programs here (is / private, as in a "
                  "chroot?)", flush=True)
            return SKIP
        p = pg.run([pg.cmd("initdb"), "-D", pg.data, "-U", "tester", "--auth=trust",
                    "--no-sync"])
        check(p.returncode == 0, "initdb failed (%d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
        check(not MEMTOP_LINE.search(p.stdout + p.stderr),
              "memtop spoke in initdb's output:\n" + p.stderr)
        print("ok: initdb, preloaded", flush=True)
        pg.start()
        try:
            run_workload(pg, memtop)
        finally:
            pg.stop()
        check(pg.proc.returncode == 0, "the postmaster exited %s" % pg.proc.returncode)
        log = pg.server_log()
        check("terminated by signal" not in log and not MEMTOP_LINE.search(log),
              "the server log says:\n" + log)
        left = segments(pg.shm)
        check(not left, "segments left behind: %s" % left)
        print("ok: stopped cleanly, no segment left, nothing from memtop in the server log")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


def run_workload(pg, memtop):
    p = pg.run([pg.cmd("pgbench"), "-i", "-s", "1", "-q"])
    check(p.returncode == 0, "pgbench -i failed: %s" % p.stderr)
    p = pg.run([pg.cmd("pgbench"), "-c", str(CLIENTS), "-j", "2", "-t", str(TRANSACTIONS)])
    check(p.returncode == 0, "pgbench failed (%d): %s%s" % (p.returncode, p.stdout, p.stderr))
    m = re.search(r"number of failed transactions: (\d+)", p.stdout)
    done = re.search(r"number of transactions actually processed: (\d+)", p.stdout)
    check(m and m.group(1) == "0" and done and int(done.group(1)) == CLIENTS * TRANSACTIONS,
          "pgbench's run:\n" + p.stdout)
    got = pg.sql("SELECT (SELECT count(*) FROM pgbench_accounts), "
                 "(SELECT count(*) FROM pgbench_history), "
                 "(SELECT sum(abalance) FROM pgbench_accounts) = "
                 "(SELECT sum(delta) FROM pgbench_history)")
    check(got == "100000|%d|t" % (CLIENTS * TRANSACTIONS), "the bank after pgbench: %r" % got)
    print("ok: pgbench, %d clients x %d transactions, none failed, the bank balanced" %
          (CLIENTS, TRANSACTIONS), flush=True)
    watch_backend(pg, memtop)


if __name__ == "__main__":
    sys.exit(main())
