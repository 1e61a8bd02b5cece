#!/usr/bin/env python3
"""check_serve_states.py -- `memtop --serve`'s process states: a start or an exit is never an error.

Why it exists: an operator alerts on memtop_exporter_processes{state="error"},
and a fleet's processes start and exit all the time.  The exporter once
counted a process whose segment had no snapshot yet (starting) or was being
removed (exiting) as an error, so the gauge flapped with every short-lived
process.  For several seconds, short-lived programs start and exit under
the preload, several at once, while /metrics is scraped repeatedly: error
stays 0 at every scrape.  Then a real failure, a segment file of this user
holding garbage for a live process, is an error (1), and no longer once the
file is removed.  Last, SIGHUP stops the exporter with exit 0, as the man
page says (SIGTERM: check_serve_churn.py).
"""

import os
import random
import signal
import subprocess
import threading
import time

import fleetlib
from fleetlib import check, e2elib

RUN_S = 6
AT_ONCE = 6


def states(base):
    """{state: value} of memtop_exporter_processes, from one scrape."""
    status, _, body = fleetlib.http_get(base + "/metrics")
    check(status == 200, "/metrics: %s" % status)
    return {dict(k[1])["state"]: v for k, v in fleetlib.metric_samples(body.decode()).items()
            if k[0] == "memtop_exporter_processes"}


def spawner(ctx, procs, stop):
    """Keeps AT_ONCE short-lived preloaded programs (0.05-0.6 s) running."""
    live = []
    while not stop.is_set():
        live = [p for p in live if p.poll() is None]
        while len(live) < AT_ONCE:
            p = e2elib.start_preloaded(ctx, ["sleep", "%.2f" % random.uniform(0.05, 0.6)])
            live.append(p)
            procs.append(p)
        time.sleep(0.02)


def churn(ctx, base):
    procs, stop = [], threading.Event()
    t = threading.Thread(target=spawner, args=(ctx, procs, stop))
    t.start()
    seen, scrapes = {}, 0
    try:
        end = time.monotonic() + RUN_S
        while time.monotonic() < end:
            s = states(base)
            scrapes += 1
            for k, v in s.items():
                seen[k] = max(seen.get(k, 0), v)
            check(s.get("error") == 0, "state=\"error\" is %s while processes start and exit "
                  "(scrape %d): %r" % (s.get("error"), scrapes, s))
            time.sleep(0.05)
    finally:
        stop.set()
        t.join(30)
        for p in procs:
            fleetlib.wait_exit(p, 5)
            e2elib.stop(p)
    check(seen.get("exported", 0) > 0, "no short-lived process was ever exported: %r" % seen)
    print("ok: %d processes started and exited over %d scrapes, error 0 at each "
          "(highest seen: %r)" % (len(procs), scrapes, seen))


def wait_state(base, state, want, what):
    e2elib.wait_for(lambda: states(base).get(state) == want, what, timeout=10, step=0.1)


def planted(ctx, base):
    """A garbage segment of this user for a live process: a real error."""
    sleeper = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL)
    seg = os.path.join(ctx.shm_dir, "memtop-%d" % sleeper.pid)
    try:
        fd = os.open(seg, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"this is not a memtop segment\n" * 1000)
        os.close(fd)
        wait_state(base, "error", 1, "state=\"error\" 1 for a garbage segment")
        print("ok: a garbage segment is counted as an error: %r" % states(base))
        os.unlink(seg)
        wait_state(base, "error", 0, "state=\"error\" back to 0 once the file is removed")
        print("ok: and no longer once it is removed")
    finally:
        if os.path.exists(seg):
            os.unlink(seg)
        e2elib.stop(sleeper)


def test(args):
    ctx = e2elib.Ctx(args)
    serve, base = fleetlib.start_serve(ctx, args)
    try:
        churn(ctx, base)
        planted(ctx, base)
        serve.send_signal(signal.SIGHUP)
        serve.wait(timeout=20)
        check(serve.returncode == 0, "memtop --serve exited %s on SIGHUP" % serve.returncode)
        print("ok: SIGHUP stops memtop --serve, exit 0")
    finally:
        e2elib.stop(serve)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
