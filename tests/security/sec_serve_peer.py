#!/usr/bin/env python3
"""sec_serve_peer.py -- a local user cannot read root's exporter unless allowed.

Why it exists: HTTP knows no users, and a root `memtop --serve` exports
every user's processes, so any local user connecting to 127.0.0.1 would
read what `memtop -p` refuses them.  Root runs memtop-demo and
`memtop --serve 127.0.0.1:PORT` with MEMTOP_SERVE_USERS naming user B (the
local Prometheus's user, say).  User A's connection must be closed without
an answer; user B and root get /metrics with the demo's pid.  An unknown
name in MEMTOP_SERVE_USERS is a one-line error and exit 2.  And an exporter
run by user A exports A's own demo but not root's (counted as denied), as
`memtop -p` would refuse it.
"""

import os
import socket
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        serve = seclib.start_as(None, [args.memtop, "--serve", "127.0.0.1:%d" % port],
                                ctx.env_with(MEMTOP_SERVE_USERS=scraper.name))
        url = "http://127.0.0.1:%d/metrics" % port
        try:
            e2elib.wait_for(lambda: scrape(None, env, url, demo.pid) == "ANSWER 1",
                            "root's scrape to show the demo", timeout=20, step=0.2)
            got = scrape(scraper, env, url, demo.pid)
            check(got == "ANSWER 1", "user B (MEMTOP_SERVE_USERS) got %r" % got)
            got = scrape(attacker, env, url, demo.pid)
            check(got.startswith("REFUSED"), "user A read root's exporter: %r" % got)
            check(serve.poll() is None, "the exporter died")
            print("ok: root and the allowed user read /metrics; another user's connection is "
                  "closed (%s)" % got)
            user_exporter(ctx, env, args, attacker, demo)
        finally:
            e2elib.stop(serve)
            e2elib.stop(demo)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
