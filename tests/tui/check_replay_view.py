"""check_replay_view.py -- `memtop -f FILE.dat`: the viewer on a recording.

memtop-demo runs 6 s with MEMTOP_RECORD=demo-%p.dat (from its start).
`memtop -f demo-PID.dat` in tmux; asserts:
  - it opens at the end: "REPLAY <t> of <d>: end, live = leaked" in the
    header, "File demo-PID.dat, N events" with N the allocations + frees
    `memtop -f --batch` counts; the leaker's row (session_log_append) shows
    the live bytes and blocks of `memtop -f F --export ref.json`;
  - `<` moves the cursor to the start: no ": end", cursor 0s, the table
    changes (the leaker's row gone or smaller) and the graph's cursor mark
    moves; `e` there exports live totals equal to the header's heap figures;
  - `]` steps forward: each step's export is later (uptime_s) by about 1% of
    the run, and the table shows the cache filled; `}` twice more and the
    header's cursor time is above 0s; the export at that cursor equals
    `memtop -f F --export --at T` (T: the same moment) in its totals and in
    every trace's live/alloc/free counters (matched by frames);
  - `>` returns to the end (": end, live = leaked", the leaker's live bytes
    again) and `e` there exports the same live totals and per-trace live
    bytes as ref.json;  q exits 0;
  - a copy cut in the middle opens; its header says ": end (file truncated)"
    or ": end (not finalized)" (never "leaked"), and after `<` (the start)
    still says "(file truncated)" or "(not finalized)"; q exits 0;
  - a corrupt file (the 32-byte header, then random bytes), a missing one,
    one that is no recording, and --at past the end (1e30 s): in a terminal,
    exit 1 with exactly one "memtop: FILE: ..." line (the file named, as
    --batch does), and the alternate screen is never taken;
  - a demo recorded across a 3.5 s SIGSTOP, opened with --at 3.0: the
    header says "STOPPED (no records A to B)" and the RSS "(N s ago)".
"""
import os
import random
import re
import signal
import subprocess
import time

import tuilib
from tuilib import check, frame, header_line

SECONDS = 6  # the demo's run time
WIDTH = 160  # room for the export paths in the status line
LEAK = "session_log_append"
CACHE = "cache_fill"
COMPARED = ["live_bytes", "live_count", "alloc_count", "alloc_bytes", "free_count",
            "free_bytes", "temporary_count", "temporary_bytes"]
REPLAY_RE = re.compile(r"REPLAY ([0-9.dhms]+) of ([0-9.dhms]+)")


def duration_s(text):
    """'1.5s' (below 100 s), '1m45s', '2h03m', '1d02h' (mt_fmt_duration) -> seconds."""
    m = re.fullmatch(r"(\d+\.\d)s", text)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    check(m and text, "not a duration: %r" % text)
    d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


def cursor(screen):
    """(cursor seconds, duration seconds, at end) from the header's first line."""
    line = header_line(screen, 0)
    m = REPLAY_RE.search(line)
    check(m, "no 'REPLAY <t> of <d>' in the header:\n" + frame(screen))
    return duration_s(m.group(1)), duration_s(m.group(2)), ": end, live = leaked" in line


def graph(screen):
    """The heap graph's lines: between the header's 4 text rows and the table heading."""
    lines = screen.split("\n")
    h = tuilib.find_heading(lines)
    return "\n".join(lines[4:h]) if h else ""


def heap_figures(screen):
    m = re.search(r"Heap (\S+ \S+) in (\d+) blocks", header_line(screen, 1))
    check(m, "no 'Heap X in N blocks' in the header:\n" + frame(screen))
    return m.group(1), int(m.group(2))


def trace_named(snap, function):
    for tr in snap["traces"]:
        if any(f.get("function") == function for f in tr["frames"]):
            return tr
    return None


def export_ref(t, name, out, at=None):
    argv = ["-f", name, "--export", t.path(out)] + (["--at", repr(at)] if at is not None else [])
    rc, _, err = t.run_memtop(argv)
    check(rc == 0, "memtop %s exited %d: %s" % (" ".join(argv), rc, err.strip()))
    return tuilib.e2elib.load_json(t.path(out))


def compare_snapshots(got, want, what):
    """Totals and every trace's counters (COMPARED) equal, traces matched by frames."""
    bad = ["totals.%s: %r vs %r" % (f, got["totals"][f], want["totals"][f])
           for f in COMPARED if got["totals"][f] != want["totals"][f]]
    gt = {tuilib.frames_key(tr): tr for tr in got["traces"]}
    wt = {tuilib.frames_key(tr): tr for tr in want["traces"]}
    zero = dict.fromkeys(COMPARED, 0)
    for k in set(gt) | set(wt):
        a, b = gt.get(k, zero), wt.get(k, zero)
        loc = (gt.get(k) or wt.get(k))["location"]
        bad += ["%s.%s: %r vs %r" % (loc, f, a[f], b[f]) for f in COMPARED if a[f] != b[f]]
    check(not bad, "%s:\n  %s" % (what, "\n  ".join(bad[:10])))


def check_heap_matches(screen, snap, what):
    shown, blocks = heap_figures(screen)
    live = snap["totals"]["live_bytes"]
    check(blocks == snap["totals"]["live_count"] and tuilib.shown_bytes_match(shown, live),
          "%s: the header shows Heap %s in %d blocks, the export %d B in %d blocks" %
          (what, shown, blocks, live, snap["totals"]["live_count"]))


def test_replay(t, name, ref):
    rc, out, err = t.run_memtop(["-f", name, "--batch"])
    check(rc == 0, "memtop -f %s --batch exited %d: %s" % (name, rc, err.strip()))
    m = re.search(r"(\d+) allocations, (\d+) frees", out)
    check(m, "--batch does not count allocations and frees:\n" + out[:500])
    events = int(m.group(1)) + int(m.group(2))
    leak_ref = trace_named(ref, LEAK)
    check(leak_ref and leak_ref["live_bytes"] > 0, "ref.json: no live %s trace" % LEAK)

    t.start([t.memtop, "-f", name], width=WIDTH)

    def leak_at_end(rows, s):
        r = tuilib.row_for(rows, LEAK)
        return REPLAY_RE.search(header_line(s, 0)) and cursor(s)[2] and r is not None
    rows, s = t.wait_rows(leak_at_end, "REPLAY ...: end, live = leaked and the %s row" % LEAK)
    check("File %s, %d events" % (name, events) in header_line(s, 3),
          "header row 3 should say 'File %s, %d events':\n%s" % (name, events, frame(s)))
    # the function bar offers nothing a replay cannot do: r only answers
    # "recording needs a running target" there
    bar = s.rstrip("\n").split("\n")[-1]
    check("F5" in bar and "Record" not in bar,
          "the replay's function bar offers F8 Record:\n%s" % bar)
    leak = tuilib.row_for(rows, LEAK)
    check(tuilib.shown_bytes_match(leak.cells["LIVE"], leak_ref["live_bytes"]) and
          tuilib.parse_count(leak.cells["BLOCKS"]) == leak_ref["live_count"],
          "%s at the end shows %s in %s blocks; memtop -f --export says %d B in %d" %
          (LEAK, leak.cells["LIVE"], leak.cells["BLOCKS"], leak_ref["live_bytes"],
           leak_ref["live_count"]))
    check_heap_matches(s, ref, "at the end")
    end_graph, end_table = graph(s), tuilib.parse_table(s)[1]
    taken = set()

    # < : the start of the run.
    t.keys("<")
    s = t.wait_for(lambda s: not cursor(s)[2], "the cursor to leave the end after <")
    cur, dur, _ = cursor(s)
    check(cur == 0 and dur >= SECONDS - 1, "after < the header says %ds of %ds" % (cur, dur))
    _, rows = tuilib.parse_table(s)
    start_leak = tuilib.row_for(rows, LEAK)
    check(start_leak is None or
          tuilib.parse_bytes(start_leak.cells["LIVE"]) < leak_ref["live_bytes"],
          "at the start the leaker still shows %s:\n%s" % (start_leak, frame(s)))
    check([r.text for r in rows] != [r.text for r in end_table],
          "the table did not change after <:\n" + frame(s))
    check(graph(s) != end_graph, "the graph's cursor mark did not move after <:\n" + frame(s))
    _, snap0 = t.export_key(taken)
    check_heap_matches(t.screen(), snap0, "export at the start")
    u0 = snap0["uptime_s"]

    # ] steps by 1% of the run.
    t.keys("]")
    _, snap1 = t.export_key(taken)
    u1 = snap1["uptime_s"]
    check(u1 > u0 and 0.005 * SECONDS < u1 - u0 < 0.02 * (SECONDS + 1),
          "] moved the cursor from %.6f s to %.6f s, expected +1%% of ~%d s" % (u0, u1, SECONDS))
    t.keys("]", "]")
    rows, s = t.wait_rows(lambda rows, s: tuilib.row_for(rows, CACHE) is not None and
                          tuilib.parse_bytes(tuilib.row_for(rows, CACHE).cells["LIVE"]) > 0,
                          "the cache's row filled after ]")
    _, snap3 = t.export_key(taken)
    check(snap3["uptime_s"] > u1, "] ] did not move the cursor on: %.6f s, then %.6f s" %
          (u1, snap3["uptime_s"]))
    t.keys("}", "}")
    s = t.wait_for(lambda s: cursor(s)[0] > 0, "the header's cursor time above 0s after } }")
    path, mid = t.export_key(taken)
    check_heap_matches(t.screen(), mid, "export after } }")
    check(snap3["uptime_s"] < mid["uptime_s"] < ref["uptime_s"],
          "} } moved the cursor to %.6f s (from %.6f s, end %.6f s)" %
          (mid["uptime_s"], snap3["uptime_s"], ref["uptime_s"]))
    # The same moment through --at (seconds from the recording's start).
    start = export_ref(t, name, "at0.json", 0)["uptime_s"]
    at = export_ref(t, name, "at-mid.json", mid["uptime_s"] - start)
    check(abs(at["uptime_s"] - mid["uptime_s"]) < 1e-6,
          "--at %.9f exported %.9f s, the cursor's export %.9f s" %
          (mid["uptime_s"] - start, at["uptime_s"], mid["uptime_s"]))
    compare_snapshots(mid, at, "e at the cursor (%s) and --at the same moment differ" % path)

    # > : back to the end.
    t.keys(">")
    rows, s = t.wait_rows(leak_at_end, "the end again after >")
    leak = tuilib.row_for(rows, LEAK)
    check(tuilib.shown_bytes_match(leak.cells["LIVE"], leak_ref["live_bytes"]),
          "back at the end %s shows %s, expected %d B" % (LEAK, leak.cells["LIVE"],
                                                          leak_ref["live_bytes"]))
    path, end = t.export_key(taken)
    compare_snapshots(end, ref, "e at the end (%s) and memtop -f --export differ" % path)
    check(end["state"] == ref["state"],
          "e at the end of the recording exports state %r, memtop -f --export says %r"
          % (end["state"], ref["state"]))
    check_baseline_rewind(t)
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop -f exited %d after q" % rc)


def check_baseline_rewind(t):
    """A baseline marked at a cursor stays while the cursor moves back to a
    moment after it (each move back dropped it without a word, as if the
    target had exec'd), and goes, saying so, when the cursor moves before it."""
    t.keys("{")
    t.wait_for(lambda s: ": end" not in header_line(s, 0), "the cursor 10% before the end")
    t.keys("b")
    t.wait_for(lambda s: "Baseline" in header_line(s, 3), "the baseline marked")
    t.keys("]")
    t.keys("]")
    t.keys("[")
    time.sleep(1.0)  # memtop ticks every 100 ms; the cursor moves at once
    s = t.screen()
    check("Baseline" in header_line(s, 3) and "baseline cleared" not in s,
          "the baseline went when the cursor moved back to a moment after it:\n" + frame(s))
    t.keys("<")
    s = t.wait_for("baseline cleared: the cursor moved before it",
                   "the baseline dropped, and said so, at the start")
    check("Baseline" not in header_line(s, 3), "the header still says Baseline:\n" + frame(s))


def test_truncated(t, name):
    data = open(t.path(name), "rb").read()
    cut = "cut.dat"
    with open(t.path(cut), "wb") as f:
        f.write(data[:len(data) // 2])
    t.start([t.memtop, "-f", cut], width=WIDTH)
    # Both rows, in one capture: tmux may capture while a frame is half drawn.
    s = t.wait_for(lambda s: bool(REPLAY_RE.search(header_line(s, 0)))
                   and ("File %s" % cut) in header_line(s, 3), "REPLAY and File for the cut file")
    line = header_line(s, 0)
    check(": end (file truncated)" in line or ": end (not finalized)" in line,
          "the cut file's header says neither ': end (file truncated)' nor ': end (not "
          "finalized)':\n" + frame(s))
    check("leaked" not in line, "a cut file's end does not mean leaked:\n" + frame(s))
    check(("File %s" % cut) in header_line(s, 3), "header row 3 does not name %s" % cut)
    t.keys("<")
    s = t.wait_for(lambda s: ": end" not in header_line(s, 0), "the cursor to leave the end")
    line = header_line(s, 0)
    check("(file truncated)" in line or "(not finalized)" in line,
          "away from the end the cut file's header no longer says it was cut short:\n" +
          frame(s))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "memtop -f %s exited %d after q" % (cut, rc))


def one_line_in_terminal(t, args, path, what):
    """`memtop ARGS` in a shell in a terminal: exit 1 with exactly one line,
    "memtop: PATH: " and WHAT in it, and the alternate screen never taken."""
    cmd = "memtop %s" % args
    t.start_shell(width=250)
    prompts = t.screen().count(tuilib.PROMPT)
    t.run_in_shell("%s %s; echo rc=$?" % (t.memtop, args))
    deadline = time.monotonic() + tuilib.WAIT_S
    while True:  # the alternate screen must never come up: look while waiting
        check(not t.alternate_on(), "%s switched to the alternate screen" % cmd)
        s = t.screen()
        if re.search(r"^rc=\d+$", s, re.M) and s.count(tuilib.PROMPT) > prompts:
            break
        check(time.monotonic() < deadline, "%s did not finish:\n%s" % (cmd, frame(s)))
        time.sleep(0.05)
    lines = s.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith("rc="))
    check(lines[i] == "rc=1", "%s: %s, expected rc=1" % (cmd, lines[i]))
    check(lines[i - 1].startswith("memtop: %s: " % path) and what in lines[i - 1] and
          tuilib.PROMPT in lines[i - 2],
          "%s: expected exactly one 'memtop: %s: ...%s...' line before rc=:\n%s" %
          (cmd, path, what, frame(s)))


def test_bad_files(t, name):
    """A corrupt, a missing and a foreign file, and --at past the end: one
    line that names the file, as --batch says it."""
    data = open(t.path(name), "rb").read()
    rnd = random.Random(1234)
    with open(t.path("corrupt.dat"), "wb") as f:
        f.write(data[:32] + bytes(rnd.getrandbits(8) for _ in range(4096)))
    one_line_in_terminal(t, "-f corrupt.dat", "corrupt.dat", "corrupt")
    one_line_in_terminal(t, "-f missing.dat", "missing.dat", "No such file")
    with open(t.path("garbage.dat"), "w") as f:
        f.write("this is not a recording\n" * 4)
    one_line_in_terminal(t, "-f garbage.dat", "garbage.dat", "not a memtop recording")
    one_line_in_terminal(t, "-f %s --at 1e30" % name, name, "past the end of the recording")


def test_stopped(t):
    """A recording across a SIGSTOP, opened at a moment inside the stop:
    the header says STOPPED with the stop's ends (not just REPLAY, read as
    running), and the RSS beside the cursor's live bytes is dated."""
    env = dict(t.env, LD_PRELOAD=os.path.abspath(t.args.preload),
               MEMTOP_RECORD=t.path("stopped-%p.dat"))
    p = subprocess.Popen([t.demo, "60"], env=env, cwd=t.workdir, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    p.send_signal(signal.SIGSTOP)
    time.sleep(3.5)
    p.send_signal(signal.SIGCONT)
    time.sleep(1.0)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    name = "stopped-%d.dat" % p.pid
    t.start([t.memtop, "-f", name, "--at", "3.0"], width=WIDTH)
    s = t.wait_for(lambda s: "REPLAY" in header_line(s, 0), "the replay header")
    head = header_line(s, 0)
    check(re.search(r"STOPPED \(no records [0-9.]+s to [0-9.]+s\)", head),
          "3.0 s into a recording stopped from 1.5 s to 5 s, the header does not say "
          "STOPPED:\n" + frame(s))
    check(re.search(r"RSS [0-9.]+ [KMG]?i?B \([0-9.]+s ago\)", header_line(s, 1)),
          "inside the stop, the RSS (of the TOTALS before it) is not dated:\n" + frame(s))
    t.keys("q")
    check(t.wait_dead() == 0, "memtop -f %s did not exit 0 after q" % name)


def test(t):
    name = t.record_demo(SECONDS)
    test_stopped(t)
    ref = export_ref(t, name, "ref.json")
    test_replay(t, name, ref)
    test_truncated(t, name)
    test_bad_files(t, name)


tuilib.main(test, __doc__)
