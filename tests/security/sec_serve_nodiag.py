#!/usr/bin/env python3
"""sec_serve_nodiag.py -- without sock_diag's TCP handler, a local user still cannot read root's exporter.

Why it exists: the exporter finds who a client on this host is through
sock_diag, and took its "no such socket" (ENOENT) for "a client of another
host", which it serves.  A kernel without tcp_diag (not built, or a
container that may not load the module) answers ENOENT for every socket:
every local user was served.  nodiag.c plays that kernel inside root's
`memtop --serve` (it must say so on stderr, or the test proves nothing).
The exporter listens on a veth address, 10.231.7.1, whose other end is in
a network namespace of its own, the "other host".  User A on this host
must be refused, also from an IPv6 socket connected to ::ffff:10.231.7.1
(listed in /proc/net/tcp6, not tcp); user B (MEMTOP_SERVE_USERS) and root
served; and user A from the other host (whom no local table lists)
served, as any remote client is.  The same again without the shim (the
remote client through sock_diag's own answers).  The same on [::1] (/proc/net/tcp6), where this host has IPv6.
"""

import os
import socket
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seclib  # noqa: E402
from seclib import check, e2elib  # noqa: E402
from sec_serve_peer import GET, free_port, scrape, start_root_exporter  # noqa: E402

HOST, REMOTE, VETH = "10.231.7.1", "10.231.7.2", "mtnodiag0"


def ip(*argv, netns=None):
    cmd = (["nsenter", "-t", str(netns), "-n"] if netns else []) + ["ip"] + list(argv)
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    check(p.returncode == 0, "%s: %s" % (" ".join(cmd), p.stderr.strip()))


def other_host():
    """A network namespace joined to this one by a veth pair: HOST here,
    REMOTE there.  Returns the process that holds it."""
    holder = subprocess.Popen(["unshare", "-n", "sleep", "120"], stdin=subprocess.DEVNULL)
    e2elib.wait_for(lambda: os.readlink("/proc/%d/ns/net" % holder.pid) !=
                    os.readlink("/proc/self/ns/net"), "the other host's namespace")
    subprocess.run(["ip", "link", "del", VETH], capture_output=True)  # an earlier run's
    ip("link", "add", VETH, "type", "veth", "peer", "name", "mtnodiag1", "netns",
       str(holder.pid))
    ip("addr", "add", HOST + "/30", "dev", VETH)
    ip("link", "set", VETH, "up")
    ip("addr", "add", REMOTE + "/30", "dev", "mtnodiag1", netns=holder.pid)
    ip("link", "set", "mtnodiag1", "up", netns=holder.pid)
    ip("link", "set", "lo", "up", netns=holder.pid)
    return holder


def scrape_from_other_host(holder, user, env, url, pid):
    cmd = ["nsenter", "-t", str(holder.pid), "-n", "--", "setpriv", "--reuid=%d" % user.uid,
           "--regid=%d" % user.gid, "--clear-groups", "python3", "-c", GET, url, str(pid)]
    p = seclib.run_as(None, cmd, env, cwd=user.home)
    check(p.returncode == 0, "the other host's client failed: %s" % p.stderr)
    return p.stdout.strip()


def ipv6_loopback(ctx, env, args, attacker, demo):
    """The exporter on [::1]: user A refused, root served (tcp6's lines)."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
            port = s.getsockname()[1]
    except OSError as e:
        print("note: no IPv6 loopback here (%s): [::1] not checked" % e)
        return
    serve, url = start_root_exporter(ctx, args, env, "[::1]:%d" % port, demo,
                                     LD_PRELOAD=args.nodiag)
    try:
        got = scrape(attacker, env, url, demo.pid)
        check(got.startswith("REFUSED"), "user A read root's exporter on [::1]: %r" % got)
        print("ok: on [::1] too, root is served and user A refused")
    finally:
        e2elib.stop(serve)


def have_ipv6():
    try:
        with socket.socket(socket.AF_INET6):
            return True
    except OSError:
        return False


def exporter(ctx, env, args, holder, users, demo, shim):
    """Root's exporter on HOST, with the shim or without it: root and user
    B served, user A refused from an IPv4 socket and from an IPv6 one (to
    ::ffff:HOST, listed in tcp6, not tcp), user A of the other host served."""
    attacker, scraper = users
    port = free_port()
    extra = dict(MEMTOP_SERVE_USERS=scraper.name)
    if shim:
        extra["LD_PRELOAD"] = args.nodiag
    serve, url = start_root_exporter(ctx, args, env, "%s:%d" % (HOST, port), demo, **extra)
    how = "sock_diag answering ENOENT" if shim else "sock_diag"
    try:
        got = scrape(scraper, env, url, demo.pid)
        check(got == "ANSWER 1", "%s: user B (MEMTOP_SERVE_USERS) got %r" % (how, got))
        got = scrape(attacker, env, url, demo.pid)
        check(got.startswith("REFUSED"), "%s: user A read root's exporter: %r" % (how, got))
        if have_ipv6():
            mapped = "http://[::ffff:%s]:%d/metrics" % (HOST, port)
            got6 = scrape(attacker, env, mapped, demo.pid)
            check(got6.startswith("REFUSED"),
                  "%s: user A read root's exporter from an IPv6 socket: %r" % (how, got6))
        remote = scrape_from_other_host(holder, attacker, env, url, demo.pid)
        check(remote == "ANSWER 1", "%s: the other host's client got %r" % (how, remote))
    finally:
        e2elib.stop(serve)
    if shim:
        err = serve.stderr.read()
        check("nodiag: sock_diag answers ENOENT" in err,
              "the shim did not take hold in the exporter: %r" % err)
    print("ok: with %s, root and user B are served, user A is refused (%s; from an IPv6 "
          "socket too), and a client of the other host is served" % (how, got), flush=True)


def test(args):
    ctx = seclib.Ctx(args)
    e2elib.skip_unless_root("a network namespace and a veth pair need root")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        print("SKIP: cannot make a network namespace here: %s" % probe.stderr.decode().strip())
        sys.exit(e2elib.SKIP)
    with seclib.throwaway_users(ctx, 2) as users:
        ctx.shm_dir = seclib.shared_dir(ctx, "shm")
        ctx.env = env = ctx.env_with(MEMTOP_SHM_DIR=ctx.shm_dir)
        holder = other_host()
        demo = None
        try:
            demo = e2elib.start_preloaded(ctx, [args.demo, "60"])
            e2elib.wait_segment(ctx, demo)
            for shim in (True, False):
                exporter(ctx, env, args, holder, users, demo, shim)
            ipv6_loopback(ctx, env, args, users[0], demo)
        finally:
            if demo:
                e2elib.stop(demo)
            e2elib.stop(holder)
            subprocess.run(["ip", "link", "del", VETH], capture_output=True)


if __name__ == "__main__":
    seclib.main(test, __doc__.splitlines()[1])
