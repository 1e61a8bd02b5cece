#!/usr/bin/env python3
"""check_serve_bounds.py -- requests the exporter must refuse, and clients that never finish one.

Why it exists: `memtop --serve` listens on a TCP port that anyone who can
reach it may send anything to.  serve_http.h promises bounds: every
connection idle for at most MT_SERVE_TIMEOUT_S (10 s), at most
MT_SERVE_PER_IP (16) connections from one address, only GET and HEAD.
Against a running exporter with a leaker to report:

- a 100 KB header line is refused (431), a 100 KB URL too (414), a POST
  with a gigabyte announced (405, without reading the body), a request line
  of binary bytes (400, or closed by the idle timeout);
- a request sent half (no blank line) is closed after the idle timeout, not
  before 5 s and not after 20 s;
- 16 half-sent connections from 127.0.0.1 hold that address's share: a 17th
  from it is refused at once, while a scrape from 127.0.0.2 is answered;
- after all that, /metrics still answers with the leaker's series.
"""

import socket
import time

import fleetlib
from fleetlib import check, e2elib, fail

PER_IP = 16  # MT_SERVE_PER_IP (src/tui/fleet/serve_http.h)
TIMEOUT_S = 10  # MT_SERVE_TIMEOUT_S


def connect(port, source="127.0.0.1"):
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))


def status_of(port, data):
    """The status code of the answer to data, 0 if closed without one (a
    request libmicrohttpd cannot parse may wait for the idle timeout)."""
    with connect(port) as s:
        s.settimeout(2 * TIMEOUT_S)
        try:
            s.sendall(data)
        except OSError:
            pass  # refused while we sent: the answer may be there all the same
        try:
            head = s.recv(64)
        except ConnectionResetError:
            return 0
        except socket.timeout:
            fail("no answer and not closed after %d s: %r" % (2 * TIMEOUT_S, data[:40]))
    parts = head.split(b" ", 2)
    return int(parts[1]) if head.startswith(b"HTTP/1.") and len(parts) > 1 else 0


def closed_after(s, limit):
    """Seconds until the server closes s (it sends nothing), or None."""
    start = time.monotonic()
    s.settimeout(limit)
    try:
        data = s.recv(64)
    except socket.timeout:
        return None
    except ConnectionResetError:
        data = b""
    check(data == b"", "a half-sent request got an answer: %r" % data)
    return time.monotonic() - start


def check_refusals(port):
    cases = [
        ("a 100 KB header", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 100000 +
         b"\r\n\r\n", (431,)),
        ("a 100 KB URL", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", (414,)),
        ("a POST of 1 GB", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000"
         b"\r\n\r\nabc", (405,)),
        ("binary bytes", b"\x00\x01\x02\xff\xfe /\r\n\r\n", (400, 0)),
    ]
    for what, data, want in cases:
        got = status_of(port, data)
        check(got in want, "%s: status %s, expected %s" % (what, got, want))
        print("ok: %s: %s" % (what, got or "closed"))


def check_half_sent(port):
    with connect(port) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        took = closed_after(s, 2 * TIMEOUT_S)
    check(took is not None, "a half-sent request was still open after %d s" % (2 * TIMEOUT_S))
    check(took > TIMEOUT_S / 2, "a half-sent request was closed after %.1f s only" % took)
    print("ok: a half-sent request was closed after %.1f s" % took)


def check_per_ip(port, base):
    held = []
    try:
        for _ in range(PER_IP):
            s = connect(port)
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            held.append(s)
        time.sleep(0.5)  # the exporter has accepted them all
        extra = connect(port)
        extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        took = closed_after(extra, 5)
        extra.close()
        check(took is not None and took < 3,
              "a 17th connection from one address was not refused at once (%s)" % took)
        with connect(port, "127.0.0.2") as other:
            other.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            head = other.recv(64)
        check(head.startswith(b"HTTP/1.1 200"),
              "another address was not answered beside them: %r" % head)
        print("ok: %d half-sent connections from 127.0.0.1: the next refused, 127.0.0.2 "
              "answered" % PER_IP)
    finally:
        for s in held:
            s.close()


def test(args):
    ctx = e2elib.Ctx(args)
    leaker = fleetlib.start_leaker(ctx, args, ctx.path("ready"))
    serve = None
    try:
        serve, base = fleetlib.start_serve(ctx, args)
        port = int(base.rsplit(":", 1)[1])
        check_refusals(port)
        check_half_sent(port)
        check_per_ip(port, base)
        time.sleep(1)  # the held connections are gone
        status, _, body = fleetlib.http_get(base + "/metrics")
        check(status == 200, "/metrics after all that: %s" % status)
        pids = {dict(k[1]).get("pid") for k in fleetlib.metric_samples(body.decode())
                if k[0] == "memtop_live_bytes"}
        check(str(leaker.pid) in pids, "the leaker's series are missing: %s" % pids)
        check(serve.poll() is None, "memtop --serve died")
        print("ok: the exporter still answers with the leaker's series")
    finally:
        e2elib.stop(leaker)
        if serve:
            e2elib.stop(serve)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
