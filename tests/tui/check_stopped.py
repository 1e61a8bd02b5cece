"""check_stopped.py -- a target that stops publishing is shown as such, not as live.

Why it exists: an operator reaches for memtop when a service is stuck.  A
target stopped with SIGSTOP (or hung: its publishing thread stops too)
keeps a readable snapshot that looked like any other: the viewer said
RUNNING with its last rates, --batch repeated it as new and the JSON
export said nothing.

Asserts, on a demo started with LD_PRELOAD by hand and watched with
`memtop -p PID`: after SIGSTOP, within a few seconds, the header says
"STOPPED (T): snapshot Ns old" (not RUNNING), the Rate field "unknown",
the ALLOC/s column "-" and the growth (header and rows' note) "until it
stopped", as --serve drops its growth gauges; `--batch` prints a "NOT PUBLISHING: snapshot #N is N s old
... stopped (state T)" line and "rate: unknown", and not the last rate, and its growth heading "until it
stopped"; a
JSON export has "publishing": false, "not_publishing" "stopped (state T)" and a
snapshot_age_s of 3 s or more, and its messages say at once (no wait for an
answer) that the process is stopped and how old the snapshot is, not "(running)".  After SIGCONT the header says RUNNING again
with a rate, and --batch and the export no longer say stale.
"""
import json
import os
import re
import signal

import tuilib
from tuilib import check, frame

STALE_WAIT_S = 12  # the threshold is 3 s (3 intervals of 1 s, at least 3 s)


def batch(t, pid):
    rc, out, err = t.run_memtop(["-p", pid, "--batch", "-n", "1", "--top", "1"])
    check(rc == 0, "memtop -p %d --batch exited %d:\n%s%s" % (pid, rc, out, err))
    return out


def export(t, pid, name):
    path = t.path(name)
    rc, out, err = t.run_memtop(["-p", pid, "--export", path])
    check(rc == 0, "memtop -p %d --export exited %d:\n%s%s" % (pid, rc, out, err))
    with open(path, encoding="utf-8") as f:
        return json.load(f), err


def rates_unknown(s):
    rows = tuilib.parse_table(s)[1]
    return "Rate unknown" in s and rows and all(r.cells["ALLOC/s"] == "-" for r in rows)


def check_stopped(t, demo):
    s = t.wait_for(lambda s: "STOPPED (T): snapshot" in s.split("\n")[0] and rates_unknown(s),
                   "the header to say STOPPED (T) and the rates unknown", STALE_WAIT_S)
    head = s.split("\n")[0]
    check("RUNNING" not in head, "a stopped target's header says RUNNING:\n" + frame(s))
    check(re.search(r"Growth \S+ until it stopped ", tuilib.header_line(s, 2)) and
          re.search(r"growth/s over the last .* until it stopped", s),
          "a stopped target's growth is not labelled 'until it stopped':\n" + frame(s))
    out = batch(t, demo.pid)
    m = re.search(r"^NOT PUBLISHING: snapshot #\d+ is (\d+) s old, none published since: "
                  r"process stopped \(state T\)", out, re.M)
    check(m and int(m.group(1)) >= 3, "--batch does not say the snapshot is stale:\n" + out)
    check(re.search(r"^rate: unknown", out, re.M) and "allocs/s" not in out,
          "--batch shows a stopped target's last rate:\n" + out)
    check(re.search(r"growth/s over the last .* until it stopped\)", out),
          "--batch does not label the growth 'until it stopped':\n" + out)
    snap, err = export(t, demo.pid, "stopped.json")
    check(snap["publishing"] is False and snap["not_publishing"] == "stopped (state T)" and
          snap["state"] == "running",
          "the export does not say not publishing / stopped: publishing=%r not_publishing=%r" %
          (snap["publishing"], snap["not_publishing"]))
    check(snap["snapshot_age_s"] >= 3, "snapshot_age_s %r, expected >= 3" % snap["snapshot_age_s"])
    check("s old" in err, "the export's warning does not say how old the snapshot is:\n" + err)
    # no 2 s wait for an answer a stopped process cannot give (it only aged
    # the snapshot), and the closing line does not call it running
    check("is stopped (state T): it cannot publish" in err and
          re.search(r"\(stopped \(state T\), snapshot \d+ s old\)", err) and "(running)" not in err,
          "the export's message does not say the process is stopped and how old its data is:\n" +
          err)
    rc, out, err = t.run_memtop(["--list"])
    check(rc == 0 and re.search(r"^\s*%d\s+stopped\s" % demo.pid, out, re.M),
          "--list does not say the process is stopped:\n%s%s" % (out, err))
    return head, m.group(1), snap["snapshot_age_s"]


def check_running_again(t, demo):
    s = t.wait_for(lambda s: "RUNNING" in s.split("\n")[0] and "Rate unknown" not in s,
                   "the header to say RUNNING again after SIGCONT", STALE_WAIT_S)
    check("until it" not in s, "the growth is still labelled 'until it' after SIGCONT:\n" +
          frame(s))
    out = batch(t, demo.pid)
    check("NOT PUBLISHING" not in out and re.search(r"^rate: \d+ allocs/s", out, re.M),
          "--batch after SIGCONT still says stale or has no rate:\n" + out)
    rc, out, _ = t.run_memtop(["--list"])
    check(re.search(r"^\s*%d\s+running\s" % demo.pid, out, re.M),
          "--list after SIGCONT does not say running:\n" + out)
    snap, _ = export(t, demo.pid, "running.json")
    check(snap["publishing"] is True and snap["not_publishing"] is None and
          snap["snapshot_age_s"] < 3,
          "the export after SIGCONT: publishing=%r not_publishing=%r age=%r" %
          (snap["publishing"], snap["not_publishing"], snap["snapshot_age_s"]))
    return s.split("\n")[0]


def test(t):
    demo = t.start_preloaded_demo(120)
    t.start([t.memtop, "-p", demo.pid])
    t.wait_symbolized()
    # a growth window too: a rate shows at once (over the whole life), a
    # growth window from the second publish on
    t.wait_for(lambda s: "RUNNING" in s.split("\n")[0] and "/s allocs" in s and
               "growth/s over the last" in s, "RUNNING with a rate and a growth window")
    os.kill(demo.pid, signal.SIGSTOP)
    try:
        head, batch_age, json_age = check_stopped(t, demo)
    finally:
        os.kill(demo.pid, signal.SIGCONT)
    again = check_running_again(t, demo)
    print("ok: stopped: %r; --batch %s s old; JSON %.1f s old; continued: %r" %
          (head.strip(), batch_age, json_age, again.strip()))
    t.keys("q")
    check(t.wait_dead() == 0, "memtop -p did not exit 0 after q")


tuilib.main(test, __doc__)
