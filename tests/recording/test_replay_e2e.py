#!/usr/bin/env python3
"""test_replay_e2e.py -- recordings read back by `memtop -f`, end to end.

 - exact: memtop-exact recorded from start (MEMTOP_RECORD) under
   `memtop --export live.json -- memtop-exact`; `memtop -f x.dat --export
   end.json` must equal the live export to the byte for every per-trace
   counter, and the replay must agree with the file's FINAL state (no
   "differ" warning); .csv, text and --at work; .folded lines are
   `frame;...;frame BYTES` and sum to the live bytes at the end.
 - kill: a target SIGKILLed mid-recording: the file opens, says it was not
   finalized, and holds events up to the last flush.
 - stopped: a recording across a SIGSTOP of the target: at a moment
   inside the stop the replay says "stopped" (batch, JSON
   recording.stopped; the JSON state stays the process's life, "running",
   as a live export of a stopped process says); just after it
   the rate says how much of its window the stop took.
 - fork_uptime: a fork child's recording (python forking 1.5 s in): its
   "up" counts from the child's start, not from its parent's.
 - record: `memtop -p PID --record FILE` (mt_cmd_record) on a running
   target, stopped with SIGINT: a finalized recording that opens.
 - record_prog_signal: `memtop --record FILE --batch -- PROG` ended by
   SIGINT, and `--export` by SIGTERM, to memtop: memtop stops PROG's
   recording before it passes the signal on, so FILE is finalized.
 - record_prog_refused: `memtop --record FILE -- PROG` over an existing
   file or into a missing directory: exit 1 and one line before PROG runs.
 - errors: missing, empty, foreign, corrupt, truncated and non-recording
   files: exit 1 and one line on stderr.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
          "temporary_count", "temporary_bytes", "peak_live_bytes"]
FOLDED = re.compile(r"^[^ ;]+(;[^ ;]+)* [0-9]+$")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(cmd, env=None, timeout=120):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def env_for(a, **extra):
    e = dict(os.environ)
    e["MEMTOP_SHM_DIR"] = a.workdir
    e.pop("MEMTOP_RECORD", None)
    for k, v in extra.items():
        e[k] = str(v)
    return e


def path(a, name):
    return os.path.join(a.workdir, name)


def traces_by_id(snap):
    return {t["id"]: t for t in snap["traces"]}


def test_exact(a):
    rec, live, ground = path(a, "exact.dat"), path(a, "live.json"), path(a, "ground.json")
    p = run([a.memtop, "--export", live, "--", a.exact, ground, "0"],
            env_for(a, MEMTOP_TEMP_MS=0, MEMTOP_RECORD=rec))
    if not check(p.returncode == 0 and os.path.exists(rec), "memtop-exact recorded from start"):
        print(p.stderr)
        return
    end = path(a, "end.json")
    p = run([a.memtop, "-f", rec, "--export", end])
    check(p.returncode == 0, "memtop -f exact.dat --export end.json exits 0 (%s)" % p.stderr.strip())
    lv, ev = json.load(open(live)), json.load(open(end))
    lt, et = traces_by_id(lv), traces_by_id(ev)
    check(sorted(lt) == sorted(et), "the same traces (%d live, %d replayed)" % (len(lt), len(et)))
    diffs = [(i, f, lt[i][f], et.get(i, {}).get(f)) for i in lt for f in FIELDS
             if lt[i][f] != et.get(i, {}).get(f)]
    check(not diffs, "every per-trace counter equals the live export %s" % diffs[:5])
    frames = [i for i in lt if lt[i]["frames"] != et.get(i, {}).get("frames")]
    check(not frames, "frames and their names equal the live export %s" % frames[:5])
    for k in ["live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count",
              "free_bytes", "temporary_count", "temporary_bytes", "peak_live_bytes"]:
        check(lv["totals"][k] == ev["totals"][k], "totals.%s equal" % k)
    check(ev["state"] == "exited" and ev["pid"] == lv["pid"], "state exited, same pid")
    # the final snapshot's wall-clock time, live and replayed: the replay adds its t to when
    # tracking began, which the target once gave to the second (time(NULL), up to 1 s early)
    check(abs(lv["time_unix"] - ev["time_unix"]) < 0.05,
          "the replay's time_unix %.3f is the live export's %.3f" %
          (ev["time_unix"], lv["time_unix"]))
    rc = ev.get("recording", {})
    check(rc.get("finalized") is True and rc.get("end_reason") == "exited" and rc.get("at_end")
          and rc.get("truncated") is False and rc.get("events_dropped") == 0,
          "the export says where it comes from: %s" % rc)
    check("recording" not in lv, "a live export has no recording object")

    p = run([a.memtop, "-f", rec, "--batch"])
    check(p.returncode == 0 and "leaked at the end" in p.stdout and "peak:" in p.stdout
          and "most temporary allocations" in p.stdout and "top allocators" in p.stdout,
          "--batch prints the summary")
    check("differ" not in p.stdout + p.stderr and p.stderr == "",
          "the replay agrees with the FINAL state, no warning")

    for ext in ["csv", "txt"]:
        out = path(a, "end." + ext)
        p = run([a.memtop, "-f", rec, "--export", out])
        check(p.returncode == 0 and os.path.getsize(out) > 0, "--export .%s" % ext)

    folded = path(a, "end.folded")
    p = run([a.memtop, "-f", rec, "--export", folded])
    lines = open(folded).read().splitlines() if p.returncode == 0 else []
    bad = [l for l in lines if not FOLDED.match(l)]
    check(lines and not bad, "%d .folded lines in flamegraph format %s" % (len(lines), bad[:2]))
    total = sum(int(l.rsplit(" ", 1)[1]) for l in lines if FOLDED.match(l))
    check(total == ev["totals"]["live_bytes"],
          ".folded sums to the live bytes at the end (%d vs %d)" % (total,
                                                                     ev["totals"]["live_bytes"]))
    check(any("site_leak" in l for l in lines), ".folded names the leaking site")

    # Junk appended to a finalized file (nothing of the recording is missing):
    # ignored and said so, but the file is not called cut or truncated.
    junk = path(a, "exact-junk.dat")
    with open(junk, "wb") as f:
        f.write(open(rec, "rb").read() + bytes(4096))
    jj = path(a, "junk.json")
    p = run([a.memtop, "-f", junk, "--export", jj])
    check(p.returncode == 0 and "4096 bytes after the recording's end are not a frame: ignored"
          in p.stderr, "junk after END: opens, says so (%s)" % p.stderr.strip())
    if p.returncode == 0:
        r = json.load(open(jj))["recording"]
        check(r["finalized"] is True and r["truncated"] is False and r["invalid_tail"] is True,
              "junk after END: finalized, not truncated, invalid_tail: %s" % r)
    p = run([a.memtop, "-f", junk, "--batch"])
    check(p.returncode == 0 and "cut short" not in p.stdout and "(leaked)" in p.stdout,
          "junk after END: --batch does not call the recording cut short")

    at0 = path(a, "at0.json")
    p = run([a.memtop, "-f", rec, "--export", at0, "--at", "0"])
    if check(p.returncode == 0, "--at 0 exports"):
        s0 = json.load(open(at0))
        check(s0["totals"]["alloc_count"] < ev["totals"]["alloc_count"],
              "--at 0 shows fewer allocations than the end")
    p = run([a.memtop, "-f", rec, "--export", at0, "--at", "100000"])
    check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1,
          "--at past the end: exit 1, one line (%s)" % p.stderr.strip())


def test_kill(a):
    rec = path(a, "killed.dat")
    env = env_for(a, LD_PRELOAD=a.preload, MEMTOP_RECORD=rec)
    t = subprocess.Popen([a.demo, "60"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(2.5)
    t.send_signal(signal.SIGKILL)
    t.wait(timeout=30)
    out = path(a, "killed.json")
    p = run([a.memtop, "-f", rec, "--export", out])
    check(p.returncode == 0, "a SIGKILLed recording opens (%s)" % p.stderr.strip())
    check("not finalized" in p.stderr or "truncated" in p.stderr,
          "it says it was cut short: %s" % p.stderr.strip().splitlines()[:2])
    if p.returncode == 0:
        s = json.load(open(out))
        check(s["totals"]["alloc_count"] > 1000 and s["uptime_s"] >= 1.0,
              "events up to the last flush (%d allocations, %.1f s)" %
              (s["totals"]["alloc_count"], s["uptime_s"]))
        check(s["state"] == "stale", "state stale (%s)" % s["state"])
        check(s["recording"]["finalized"] is False and s["recording"]["end_reason"] is None,
              "the export says the recording is not finalized: %s" % s["recording"])
    early = path(a, "killed-early.json")
    # The writer's first pass writes a TOTALS (~20 ms in; the periodic ones
    # come once a second): 0.6 s leaves room for a loaded machine.
    p = run([a.memtop, "-f", rec, "--export", early, "--at", "0.6"])
    if check(p.returncode == 0, "--at 0.6 of a recording from the start exports"):
        t = json.load(open(early))["totals"]
        # thread_count counts threads that made a tracked allocation: it may
        # still be 0 at the first TOTALS, but it is known (not null).
        check(isinstance(t["rss_bytes"], int) and t["rss_bytes"] > 0 and
              isinstance(t["thread_count"], int),
              "RSS and threads are known 0.6 s in: a TOTALS right after the start (%s, %s)" %
              (t["rss_bytes"], t["thread_count"]))
        # ... and dated: RSS is the newest TOTALS', not the cursor's moment
        age = t.get("rss_age_ms")
        check(isinstance(age, int) and 0 < age <= 650,
              "0.6 s in, the RSS says how old it is (the TOTALS before the cursor): "
              "rss_age_ms %r" % age)
        p = run([a.memtop, "-f", rec, "--batch", "--at", "0.6"])
        check(re.search(r"\| RSS [0-9.]+ [KMG]?i?B \(0\.[0-6] s ago\) \|", p.stdout),
              "--batch --at 0.6 dates the RSS: %s" %
              [l for l in p.stdout.splitlines() if l.startswith("heap")])
    data = open(rec, "rb").read()
    cut = path(a, "killed-cut.dat")
    with open(cut, "wb") as f:
        f.write(data[:len(data) - 7])
    p = run([a.memtop, "-f", cut, "--batch"])
    check(p.returncode == 0 and "truncated" in p.stderr,
          "cut 7 bytes short: opens and says truncated")
    check("(leaked)" not in p.stdout and "not finalized" in p.stdout,
          "live blocks of an unfinished recording are not called leaked")
    # its headline: the process was killed or still records, not "stale"
    # (which reads as a process gone or a viewer's data out of date)
    head = [l for l in p.stdout.splitlines() if l.startswith("memtop - ")]
    check(head and re.search(r" - pid \d+ not finalized, up ", head[0]),
          "the --batch headline of an unfinished recording says so: %s" % head[:1])
    # What a power loss leaves (zeros after the last write) or a bad copy
    # (anything): a tail that is no frame, ignored like a cut one.
    for name, tail in [("killed-zeros.dat", bytes(4096)), ("killed-junk.dat", os.urandom(777))]:
        with open(path(a, name), "wb") as f:
            f.write(data + tail)
        p = run([a.memtop, "-f", path(a, name), "--export", path(a, "tail.json")])
        check(p.returncode == 0 and "%d trailing bytes are not a valid frame: ignored" % len(tail)
              in p.stderr, "%s opens and says its tail was ignored (%s)" % (name, p.stderr.strip()))
        if p.returncode == 0:
            t = json.load(open(path(a, "tail.json")))
            check(t["recording"]["truncated"] is True and t["totals"]["alloc_count"] > 1000,
                  "%s: everything before the tail, marked truncated" % name)


def test_stopped(a):
    rec = path(a, "stopped.dat")
    env = env_for(a, LD_PRELOAD=a.preload, MEMTOP_RECORD=rec)
    t = subprocess.Popen([a.demo, "60"], env=env, stdout=subprocess.DEVNULL)
    time.sleep(1.5)
    t.send_signal(signal.SIGSTOP)
    time.sleep(3.5)
    t.send_signal(signal.SIGCONT)
    time.sleep(1.5)
    t.send_signal(signal.SIGKILL)
    t.wait(timeout=30)
    out = path(a, "stopped.json")
    # a moment before the stop: running; find the stop from the export
    p = run([a.memtop, "-f", rec, "--export", out, "--at", "0.5"])
    if not check(p.returncode == 0, "a recording across a SIGSTOP opens (%s)" % p.stderr.strip()):
        return
    s = json.load(open(out))
    check(s["state"] == "stale" or s["state"] == "running",
          "0.5 s in, before the stop: %s" % s["state"])
    check(s["recording"]["stopped"] is None, "0.5 s in: no stop (%s)" % s["recording"]["stopped"])
    p = run([a.memtop, "-f", rec, "--export", out, "--at", "3.0"])
    check(p.returncode == 0 and "(stopped)" in p.stderr,
          "--at 3.0, inside the stop: the message says stopped (%s)" % p.stderr.strip())
    s = json.load(open(out))
    st = s["recording"]["stopped"]
    check(s["state"] == "running",
          "inside the stop, the state is the process's life, running (as live), not %s" % s["state"])
    check(st is not None and 0.8 <= st["from_s"] <= 2.6 and st["to_s"] - st["from_s"] >= 3.0,
          "recording.stopped spans the 3.5 s stop: %s" % st)
    p = run([a.memtop, "-f", rec, "--batch", "--at", "3.0"])
    check(p.returncode == 0 and re.search(r"pid \d+ stopped,", p.stdout) and
          "stopped: from " in p.stdout,
          "--batch inside the stop says stopped: %s" %
          [l for l in p.stdout.splitlines() if "pid" in l or "stopped" in l][:3])
    if st is not None:  # just after it, the rate's window spans the stop: it says so
        p = run([a.memtop, "-f", rec, "--batch", "--at", "%.3f" % (st["to_s"] + 0.4)])
        rate = [l for l in p.stdout.splitlines() if l.startswith("rate:")]
        check(p.returncode == 0 and rate and re.search(r"over the last [0-9.]+ s, [0-9.]+ s of it "
                                                       r"stopped", rate[0]),
              "0.4 s after the stop, the rate says how much of its window was stopped: %s" % rate)


FORKER = """
import os, time
junk = []
t0 = time.time()
while time.time() - t0 < 1.5:
    junk.append(bytearray(100)); time.sleep(0.001)
pid = os.fork()
if pid == 0:
    t1 = time.time()
    while time.time() - t1 < 0.5:
        junk.append(bytearray(100)); time.sleep(0.001)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_fork_uptime(a):
    d = path(a, "fork")
    os.makedirs(d, exist_ok=True)
    env = env_for(a, LD_PRELOAD=a.preload, MEMTOP_RECORD=os.path.join(d, "f.%p.dat"))
    p = run([sys.executable, "-c", FORKER], env=env)
    kids = [f for f in os.listdir(d) if f.endswith(".fork.dat")]
    if not check(p.returncode == 0 and len(kids) == 1,
                 "a forking python records its child (%s, %s)" % (kids, p.stderr[-300:])):
        return
    out = path(a, "fork.json")
    p = run([a.memtop, "-f", os.path.join(d, kids[0]), "--export", out])
    if not check(p.returncode == 0, "the fork child's recording exports (%s)" % p.stderr):
        return
    s = json.load(open(out))
    check(s["fork_child"] is True and s["tracking_s"] >= 1.5 and s["uptime_s"] < 1.4,
          "a fork child's uptime counts from its own start: uptime_s %.2f (the child lived "
          "~0.5 s), tracking_s %.2f (from its parent's start)" % (s["uptime_s"], s["tracking_s"]))


def test_exec(a):
    """A recording ended by exec: at its end the process is exec'd (what was
    live was never freed by that image), not running."""
    rec = path(a, "exec.dat")
    script = ("import os, time\n"
              "keep = [bytearray(1000 + i) for i in range(50)]\n"
              "time.sleep(0.3)\n"
              "env = dict(os.environ); env.pop('LD_PRELOAD'); env.pop('MEMTOP_RECORD')\n"
              "os.execve('/bin/true', ['true'], env)\n")
    p = run(["python3", "-c", script], env_for(a, LD_PRELOAD=a.preload, MEMTOP_RECORD=rec))
    if not check(p.returncode == 0 and os.path.exists(rec), "python3 recorded until its exec"):
        return
    out = path(a, "exec.json")
    p = run([a.memtop, "-f", rec, "--export", out])
    if check(p.returncode == 0, "the exec-ended recording opens (%s)" % p.stderr.strip()):
        snap = json.load(open(out))
        check(snap["state"] == "exec'd" and snap["execd"] is True
              and snap["recording"]["end_reason"] == "exec",
              "state %r execd %r end_reason %r" % (snap["state"], snap["execd"],
                                                   snap["recording"]["end_reason"]))
    p = run([a.memtop, "-f", rec, "--batch"])
    check(p.returncode == 0 and "exec'd" in p.stdout and " running," not in p.stdout,
          "--batch says exec'd at the end, not running")


def test_record(a):
    rec = path(a, "recorded.dat")
    env = env_for(a, LD_PRELOAD=a.preload)
    t = subprocess.Popen([a.demo, "60"], env=env, stdout=subprocess.DEVNULL)
    try:
        seg = os.path.join(a.workdir, "memtop-%d" % t.pid)
        for _ in range(100):
            if os.path.exists(seg):
                break
            time.sleep(0.05)
        d = subprocess.Popen([a.record_drv, "-p", str(t.pid), "--record", rec],
                             env=env_for(a), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        time.sleep(2.5)
        d.send_signal(signal.SIGINT)
        out, err = d.communicate(timeout=30)
        check(d.returncode == 0, "--record stops on SIGINT, exit 0 (%s)" % err.strip()[-200:])
        check("recording %s" % rec in err, "a status line per second on stderr")
        check(out.startswith("recorded %s: " % rec), "it prints the path and size: %s" % out)
        p = run([a.memtop, "-f", rec, "--batch"])
        check(p.returncode == 0 and p.stderr == "" and "stopped" in p.stdout,
              "the recording is finalized (stopped) and opens (%s)" % p.stderr.strip())
        check("(leaked)" not in p.stdout and "leaked at the end" not in p.stdout
              and "stopped while the process ran" in p.stdout,
              "live blocks of a stopped recording are not called leaked")
        out = path(a, "recorded.json")
        p = run([a.memtop, "-f", rec, "--export", out])
        r = json.load(open(out)).get("recording", {}) if p.returncode == 0 else {}
        check(r.get("finalized") is True and r.get("end_reason") == "stopped",
              "the export of a stopped recording says so: %s" % r)
        p = run([a.record_drv, "-p", str(t.pid), "--record", rec], env_for(a), timeout=30)
        check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1,
              "recording over an existing file: exit 1, one line (%s)" % p.stderr.strip())
    finally:
        t.kill()
        t.wait()


def test_record_prog_signal(a):
    """memtop ends PROG with the signal it got; libmemtop.so has no handler
    for it (the target's own come first), so memtop must stop the recording
    first or FILE stays "not finalized" without its last events."""
    for sig, report in ((signal.SIGINT, ["--batch", "-d", "1"]),
                        (signal.SIGTERM, ["--export", path(a, "sig.json")])):
        rec = path(a, "sig%d.dat" % sig)
        m = subprocess.Popen([a.memtop, "--record", rec] + report + ["--", a.demo, "600"],
                             env=env_for(a), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        for _ in range(100):
            if os.path.exists(rec) and os.path.getsize(rec) > 0:
                break
            time.sleep(0.05)
        time.sleep(1)
        m.send_signal(sig)
        _, err = m.communicate(timeout=30)
        p = run([a.memtop, "-f", rec, "--batch"])
        check(p.returncode == 0 and "not finalized" not in p.stdout + p.stderr
              and re.search(r"^duration: .*stopped$", p.stdout, re.M),
              "%s to memtop %s -- PROG: the recording is finalized (%s; %s)"
              % (signal.Signals(sig).name, report[0], p.stdout[:300], err.strip()[-200:]))


def test_record_prog_refused(a):
    """`memtop --record FILE -- PROG`: what PROG's libmemtop.so would refuse
    (an existing file, a missing directory, /proc, where root passes the
    access check) is an error before PROG runs,
    not a line among PROG's output and an exit 0 without a recording."""
    old = path(a, "exists.dat")
    open(old, "w").close()
    out = path(a, "refused.json")
    for rec, what in ((old, "exists"), (path(a, "no-dir/x.dat"), "cannot create a file in"),
                      (path(a, "bad%x.dat"), "bad file name"),
                      ("/proc/memtop-x.dat", "cannot create a file in /proc: it is the proc"),
                      (path(a, "x" * 500 + "%p.dat"), "too long")):
        p = run([a.memtop, "--record", rec, "--export", out, "--", a.demo, "1"], env_for(a))
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and what in lines[0] and rec.split("/")[-2]
              in lines[0] and not os.path.exists(out),
              "--record %s -- PROG: exit 1, one line, PROG not run (%r)" % (rec[-60:], p.stderr))
    check(os.path.getsize(old) == 0, "the existing file is untouched")


def test_record_cwd_percent(a):
    """A relative --record name in a directory whose name holds '%': the
    target reads the absolute name as a pattern, so the directory's '%'
    must reach it as "%%" (before: "%n" in the directory's name became a
    counter, and the file went elsewhere or nowhere)."""
    d = path(a, "w%nq%%")
    os.makedirs(d, exist_ok=True)
    p = subprocess.run([a.memtop, "--record", "r.%n.dat", "--export", path(a, "pct.json"), "--",
                        a.demo, "1"], env=env_for(a), cwd=d, capture_output=True, text=True,
                       timeout=60)
    made = sorted(os.listdir(d))
    check(p.returncode == 0 and made == ["r.0.dat"],
          "recorded into the directory named with '%%': %r (%s)" % (made, p.stderr.strip()))
    p = run([a.record_drv, "-p", "1", "--record", "bad%q.dat"], env_for(a), timeout=30)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "bad file name 'bad%q.dat'" in lines[0],
          "-p PID --record with a bad name: exit 1, one line naming it (%r)" % p.stderr)


def expect_error(a, name, data, what):
    f = path(a, name)
    if data is not None:
        with open(f, "wb") as fp:
            fp.write(data)
    p = run([a.memtop, "-f", f, "--export", path(a, "x.json")])
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and lines[0].startswith("memtop: ")
          and "Traceback" not in p.stderr,
          "%s: exit 1, one line: %s" % (what, lines[:2]))
    p = run([a.memtop, "-f", f, "--batch"])
    check(p.returncode == 1 and p.stdout == "", "%s: --batch exit 1, nothing on stdout" % what)


def test_errors(a):
    good = open(path(a, "exact.dat"), "rb").read() if os.path.exists(path(a, "exact.dat")) else b""
    expect_error(a, "missing.dat", None, "missing file")
    expect_error(a, "empty.dat", b"", "empty file")
    expect_error(a, "text.dat", b"this is not a recording\n" * 4, "not a recording")
    if not good:
        return
    foreign = bytearray(good)
    foreign[8] = 9
    expect_error(a, "foreign.dat", bytes(foreign), "foreign version")
    expect_error(a, "header.dat", good[:20], "truncated header")
    corrupt = bytearray(good)
    corrupt[len(good) // 2] ^= 0x5a
    expect_error(a, "corrupt.dat", bytes(corrupt), "corrupt frame")
    expect_error(a, "nobody.dat", good[:40], "no complete frame")
    second = good.find(b"\x28\xb5\x2f\xfd", 33)  # where the second zstd frame begins
    junk = good[:second] + bytes(64) + good[second:]  # bytes that are no frame, frames after
    expect_error(a, "middle.dat", junk, "garbage between valid frames")
    junk = bytearray(good)
    junk[32:36] = b"JUNK"  # the first frame's magic
    expect_error(a, "first.dat", bytes(junk), "a bad first frame")


def main():
    ap = argparse.ArgumentParser()
    for opt in ["memtop", "preload", "exact", "demo", "record-drv", "workdir"]:
        ap.add_argument("--" + opt, required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    test_exact(a)
    test_kill(a)
    test_stopped(a)
    test_fork_uptime(a)
    test_exec(a)
    test_record(a)
    test_record_prog_signal(a)
    test_record_prog_refused(a)
    test_record_cwd_percent(a)
    test_errors(a)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
