#!/usr/bin/env python3
"""sec_serve_peer.py -- a local user cannot read root's exporter unless allowed.

Why it exists: HTTP knows no users, and a root `memtop --serve` exports
every user's processes, so any local user connecting to 127.0.0.1 would
read what `memtop -p` refuses them.  Root runs memtop-demo and
`memtop --serve 127.0.0.1:PORT` with MEMTOP_SERVE_USERS naming user B (the
local Prometheus's user, say).  User A's connection must be closed without
an answer; user B and root get /metrics with the demo's pid.  An unknown
name in MEMTOP_SERVE_USERS is a one-line error and exit 2.  User A cannot
keep the others out either: A opens 16 connections from each of
127.0.0.1 to 127.0.0.5 (80, past the exporter's 64) and sends half a
request on each; each must be closed within 5 s (before, A held all 64
until the idle timeout, and every scrape was refused meanwhile), and root's
scrape is answered while A tries.  And an exporter
run by user A exports A's own demo but not root's (counted as denied), as
`memtop -p` would refuse it.
"""

import os
import socket
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, e2elib  # noqa: E402

GET = """
import sys, urllib.request
try:
    body = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
    print("ANSWER", body.count("memtop_live_bytes{pid=\\"%s\\"" % sys.argv[2]))
    if len(sys.argv) > 3:
        print(sys.argv[3] in body)
except Exception as e:
    print("REFUSED", type(e).__name__)
"""


# User A's connections: 16 from each of five local addresses, half a
# request sent on each, then how many the server closed within 5 s (half its
# 10 s idle timeout, which would close them anyway).
HOLD = """
import socket, sys, time
port, held = int(sys.argv[1]), []
for a in range(1, 6):
    for _ in range(16):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=3,
                                         source_address=("127.0.0.%d" % a, 0))
            s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n")
            held.append(s)
        except OSError:
            pass  # refused: not held either
print("READY", flush=True)
closed, end = 0, time.monotonic() + 5
for s in held:
    s.settimeout(max(0.01, end - time.monotonic()))
    try:
        closed += s.recv(64) == b""
    except socket.timeout:
        pass
    except OSError:
        closed += 1
print("HELD", len(held) - closed, "OF", len(held), flush=True)
time.sleep(5)
"""


def hold_slots(attacker, env, port, url, pid):
    """User A tries to hold every connection slot; root must be served meanwhile."""
    hold = seclib.start_as(attacker, ["python3", "-c", HOLD, str(port)], env,
                           stdout=subprocess.PIPE)
    try:
        check(hold.stdout.readline().strip() == "READY", "user A's client failed: %s" %
              (hold.poll() is not None and hold.stderr.read()))
        got = scrape(None, env, url, pid)
        check(got == "ANSWER 1", "root was not served while user A held connections: %r" % got)
        held = hold.stdout.readline().split()
        check(held[:1] == ["HELD"] and held[1] == "0",
              "user A's connections stayed open: %s" % " ".join(held))
        print("ok: user A's %s connections were closed at once; root was served meanwhile" %
              held[3])
    finally:
        e2elib.stop(hold)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_root_exporter(ctx, args, env, bind, demo, **more_env):
    """Root's `memtop --serve BIND` (more_env: MEMTOP_SERVE_USERS, LD_PRELOAD),
    once root's scrape shows the demo; returns (the process, its URL)."""
    serve = seclib.start_as(None, [args.memtop, "--serve", bind], ctx.env_with(**more_env))
    url = "http://%s/metrics" % bind
    try:
        e2elib.wait_for(lambda: scrape(None, env, url, demo.pid) == "ANSWER 1",
                        "root's scrape of %s to show the demo" % bind, timeout=20, step=0.2)
    except BaseException:
        e2elib.stop(serve)
        raise
    return serve, url


def scrape(user, env, url, pid, *more):
    p = seclib.run_as(user, ["python3", "-c", GET, url, str(pid)] + list(more), env)
    check(p.returncode == 0, "the client failed: %s" % p.stderr)
    return p.stdout.strip()


def user_exporter(ctx, env, args, user, root_demo):
    """An exporter run by user: its own demo is exported, root's is not."""
    demo = seclib.start_as(user, [args.demo, "60"], dict(env, LD_PRELOAD=args.preload))
    port = free_port()
    serve = seclib.start_as(user, [args.memtop, "--serve", str(port)], env)
    url = "http://127.0.0.1:%d/metrics" % port
    try:
        e2elib.wait_for(lambda: scrape(user, env, url, demo.pid) == "ANSWER 1",
                        "user A's exporter to show A's demo", timeout=20, step=0.2)
        got = scrape(user, env, url, root_demo.pid,
                     'memtop_exporter_processes{state="denied"} 1')
        check(got == "ANSWER 0\nTrue", "user A's exporter and root's demo: %r" % got)
        print("ok: user A's exporter exports A's demo, not root's (denied 1)")
    finally:
        e2elib.stop(serve)
        e2elib.stop(demo)


def test(args):
    ctx = seclib.Ctx(args)
    with seclib.throwaway_users(ctx, 2) as (attacker, scraper):
        ctx.shm_dir = seclib.shared_dir(ctx, "shm")
        ctx.env = env = ctx.env_with(MEMTOP_SHM_DIR=ctx.shm_dir)
        bad = seclib.run_as(None, [args.memtop, "--serve", "1"],
                            ctx.env_with(MEMTOP_SERVE_USERS="mtsec-no-such-user"))
        check(bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and
              "no such user" in bad.stderr, "an unknown MEMTOP_SERVE_USERS: %s" %
              e2elib.describe(bad))
        demo = e2elib.start_preloaded(ctx, [args.demo, "60"])
        e2elib.wait_segment(ctx, demo)
        port = free_port()
        serve, url = start_root_exporter(ctx, args, env, "127.0.0.1:%d" % port, demo,
                                         MEMTOP_SERVE_USERS=scraper.name)
        try:
            got = scrape(scraper, env, url, demo.pid)
            check(got == "ANSWER 1", "user B (MEMTOP_SERVE_USERS) got %r" % got)
            got = scrape(attacker, env, url, demo.pid)
            check(got.startswith("REFUSED"), "user A read root's exporter: %r" % got)
            check(serve.poll() is None, "the exporter died")
            print("ok: root and the allowed user read /metrics; another user's connection is "
                  "closed (%s)" % got)
            hold_slots(attacker, env, port, url, demo.pid)
            user_exporter(ctx, env, args, attacker, demo)
        finally:
            e2elib.stop(serve)
            e2elib.stop(demo)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
