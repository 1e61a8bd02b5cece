"""test_writer_backlog.py -- a thread's recording buffer grows while the
writer is behind, within its bound, and only past that bound are events
dropped, counted and shown (record_buffer.h: the drop policy).

The disk is slowed with MEMTOP_TEST_WRITE_DELAY_US (the writer sleeps
before each write to the file):

 - grows: 150,000 allocations (writer_random bulk: 225,000 events, fewer
   than a thread's bound of 262,144) while every write takes 200 ms: not
   one event may be dropped (before buffers grew, a thread's ring held
   8,192 events and a full ring waited 1 ms, then dropped), and the
   recording replays to its FINAL state;
 - bounded: 600,000 allocations (900,000 events) with writes of 1 s:
   events are dropped, and the file says so everywhere: END's and the
   LOST records' counts agree (dat_dump), `memtop -f --export` JSON has
   recording.events_dropped, the text export and --batch say "inexact";
   the recording still ends in the target's final state; the drops are
   for the cause "disk behind" (MEMTOP_LOG=info's last line: the disk
   slept in half of the last 2 s of writes and more), not only the hooks'
   wait cap; no hook waited much longer than that cap (1 s); the file
   gives the cause of every drop as the hooks counted them, and so do
   --batch, the JSON (dropped_by_cause) and text exports; and the process
   grew by less than the bound (8 MiB) plus the writer's own buffers
   over the same run without the delay (VmHWM);
 - starved: a writer that gets no core (MEMTOP_TEST_WRITER_STALL_MS=2000:
   it sleeps 2 s after each pass, outside any write): 300,000 events, past
   the bound, so the hook waits its 1 s cap and drops; every drop is
   "writer starved" in the file, the log, --batch and the JSON export, and
   in the live status line (writer_ctl: the viewer's header line) while
   the process still runs.

Drops need a thread to make a bound's worth of events (262,144) while one
write lasts.  writer_random touches its heap first (no page fault per
allocation: ~0.1 s of CPU for those events), and the writes last 1 s (the
longest MEMTOP_TEST_WRITE_DELAY_US): the program needs a tenth of a core.
With writes of 300 ms and a page fault per allocation (~0.35 s of CPU),
a machine loaded with three busy loops beside the test made no drops in
3 runs out of 4."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

from test_writer_common import args, check, dump

# LOST's causes, by number (dat_format.h MT_DAT_LOST_*), as the JSON export names them
CAUSES = ["disk_behind", "writer_starved", "could_not_wait", "no_buffer", "initial_capture",
          "missed_at_end"]
BOUND_KB = 8 * 1024  # 32 chunks of 8192 events of 32 bytes (record_buffer.h)
WRITER_SLACK_KB = 12 * 1024  # the writer: zstd, a frame's block map (more events a frame)
a = args()
prog = os.path.join(a.progs, "writer_random")


def record(name, n, delay_us, stall_ms=0):
    rec = os.path.join(a.workdir, name + ".dat")
    if os.path.exists(rec):
        os.unlink(rec)
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir, "MEMTOP_RECORD": rec,
              "MEMTOP_TEST_WRITE_DELAY_US": str(delay_us), "MEMTOP_LOG": "info",
              "MEMTOP_TEST_WRITER_STALL_MS": str(stall_ms)})
    p = subprocess.run([prog, "bulk", str(n)], env=e, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0 and os.path.exists(rec), "%s: ran and recorded" % name)
    m = re.search(r"hwm_kb=(\d+)", p.stdout)
    why = re.search(r"(\d+) events dropped \(disk behind (\d+), wait cap (\d+), could not wait "
                    r"(\d+), no buffer (\d+)\); longest hook wait ([0-9.]+) ms", p.stderr)
    check(why is not None, "%s: the drops by cause are logged" % name)
    print("%s: %s" % (name, why.group(0)))
    return rec, int(m.group(1)), why


def record_starved():
    """The starved run, held 3 s after its allocations: the live status line
    (what the viewer's header shows, through writer_ctl) names the cause of
    the drops while the process still runs, and so does `memtop --serve`'s
    /metrics (memtop_recording_dropped_events{cause="writer_starved"})."""
    port = free_port()
    serve = subprocess.Popen([a.memtop, "--serve", "127.0.0.1:%d" % port],
                             env=dict(os.environ, MEMTOP_SHM_DIR=a.workdir),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rec = os.path.join(a.workdir, "starved.dat")
    if os.path.exists(rec):
        os.unlink(rec)
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir, "MEMTOP_RECORD": rec,
              "MEMTOP_LOG": "info", "MEMTOP_TEST_WRITER_STALL_MS": "2000"})
    p = subprocess.Popen([prog, "bulk", "200000", "3"], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    check(line.startswith("bulk "), "starved: the allocations are made (%r)" % line)
    time.sleep(0.2)  # the status is published every 20 ms
    st = subprocess.run([a.ctl, a.workdir, str(p.pid), "status"], capture_output=True, text=True,
                        timeout=30)
    live = re.search(r"^rec_line (.*)$", st.stdout, re.M)
    dropped = re.search(r"^rec_dropped (\d+)$", st.stdout, re.M)
    check(live and dropped, "starved: writer_ctl status answers (%s)" % st.stdout + st.stderr)
    n = int(dropped.group(1))
    words = "(recording inexact: %d events dropped: writer stalled (wait cap) %d)" % (n, n)
    check(n > 0 and words in live.group(1),
          "starved: the live status names the cause (%r in %r)" % (words, live.group(1)))
    try:
        metrics = scrape(port)
    finally:
        serve.kill()
        serve.wait()
    got = dict(re.findall(r'^memtop_recording_dropped_events\{pid="%d",[^}]*cause="(\w+)"\} (\d+)$'
                          % p.pid, metrics, re.M))
    check(got.get("writer_starved") == str(n) and
          all(v == "0" for k, v in got.items() if k != "writer_starved") and len(got) == 8,
          "starved: /metrics gives the drops by cause (%d writer starved): %r" % (n, got))
    _, err = p.communicate(timeout=600)
    check(p.returncode == 0 and os.path.exists(rec), "starved: ran and recorded")
    why = re.search(r"(\d+) events dropped \(disk behind (\d+), wait cap (\d+), could not wait "
                    r"(\d+), no buffer (\d+)\); longest hook wait ([0-9.]+) ms", err)
    check(why is not None, "starved: the drops by cause are logged")
    print("starved: %s" % why.group(0))
    return rec, why


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    """/metrics of `memtop --serve` on port, once it answers (30 s at most)."""
    deadline = time.time() + 30
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                return r.read().decode("utf-8", "replace")
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def export(rec, fmt):
    out = rec + "." + fmt
    p = subprocess.run([a.memtop, "-f", rec, "--export", out], capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "memtop -f %s --export .%s exits 0 (%s)" % (os.path.basename(rec), fmt,
                                                                       p.stderr.strip()))
    return open(out).read(), p.stderr


rec, _, _ = record("grows", 150000, 200000)
info, _, _ = dump(a, rec)
check(info["end_dropped"] == 0 and info["lost_alloc"] == 0 and info["lost_free"] == 0,
      "grows: nothing dropped while the writer was behind (%d)" % info["end_dropped"])
text, err = export(rec, "json")
check(json.loads(text)["recording"]["events_dropped"] == 0 and "differ" not in err,
      "grows: the replay equals the final state")

_, hwm_fast, _ = record("fast", 600000, 0)
rec, hwm_slow, why = record("bounded", 600000, 1000000)
info, _, _ = dump(a, rec)
dropped = info["end_dropped"]
check(dropped > 0, "bounded: a disk that cannot keep up makes the writer drop (%d)" % dropped)
check(int(why.group(2)) > 0, "bounded: drops because the disk is behind (%s)" % why.group(2))
check(float(why.group(6)) < 1500, "bounded: no hook waited more than 1.5 s (%s ms)" % why.group(6))
check(info["lost_alloc"] + info["lost_free"] == dropped,
      "bounded: the LOST records count every drop (%d + %d)" % (info["lost_alloc"],
                                                               info["lost_free"]))
# The cause of every drop is in the file (LOST's causes, dat_dump decodes
# them on its own), as the hooks counted them (the log line).
file_why = {c: info.get("lost_why_%d" % i, 0) for i, c in enumerate(CAUSES)}
log_why = {c: int(why.group(i + 2)) for i, c in enumerate(CAUSES[:4])}
print("bounded: causes in the file: %s" % file_why)
check(sum(file_why.values()) == dropped and info["lost_unsaid"] == 0,
      "bounded: the LOST records give a cause for each of the %d drops" % dropped)
check(all(file_why[c] == log_why[c] for c in log_why),
      "bounded: the file's causes are the hooks' (%s, log %s)" % (file_why, log_why))
check(file_why["disk_behind"] > 0, "bounded: the file says the disk was behind")
text, err = export(rec, "json")
snap = json.loads(text)
check(snap["recording"]["events_dropped"] == dropped, "bounded: the JSON export says %d dropped"
      % snap["recording"]["events_dropped"])
by = snap["recording"]["dropped_by_cause"]
check(all(by[c] == file_why[c] for c in CAUSES) and sum(by.values()) == dropped,
      "bounded: the JSON export's dropped_by_cause is the file's (%s)" % by)
check("inexact" in err, "bounded: memtop -f says the recording is inexact")
words = "disk behind %d" % file_why["disk_behind"]
check(words in err, "bounded: memtop -f names the cause (%r in %r)" % (words, err))
t = snap["totals"]
check(t["alloc_count"] >= 600000 and t["free_count"] >= 300000,
      "bounded: the end is the target's final state (%d allocations)" % t["alloc_count"])
check(info["allocs"] + info["lost_alloc"] == t["alloc_count"]
      and info["frees"] + info["lost_free"] == t["free_count"],
      "bounded: written + dropped = made (%d + %d allocations, %d + %d frees)"
      % (info["allocs"], info["lost_alloc"], info["frees"], info["lost_free"]))
text, _ = export(rec, "txt")
check("inexact: %d events dropped" % dropped in text, "bounded: the text export says so")
check(words in text, "bounded: the text export names the cause")
p = subprocess.run([a.memtop, "-f", rec, "--batch"], capture_output=True, text=True, timeout=300)
check(p.returncode == 0 and "inexact" in p.stdout + p.stderr, "bounded: --batch says so")
check(words in p.stdout, "bounded: --batch gives the drops by cause")

# A writer that gets no core (MEMTOP_TEST_WRITER_STALL_MS: it sleeps 2 s
# after each pass, in no write): 300,000 events, the bound (262,144) then one
# chunk (8,192) a pass, so the hook waits its 1 s cap and drops several
# times, every drop "writer starved", none "disk behind".
rec, why = record_starved()
info, _, _ = dump(a, rec)
dropped = info["end_dropped"]
file_why = {c: info.get("lost_why_%d" % i, 0) for i, c in enumerate(CAUSES)}
print("starved: causes in the file: %s" % file_why)
check(dropped > 0 and file_why["writer_starved"] == dropped
      and int(why.group(3)) == dropped and info["lost_unsaid"] == 0,
      "starved: every drop (%d) is 'writer starved' in the file and the log" % dropped)
text, err = export(rec, "json")
by = json.loads(text)["recording"]["dropped_by_cause"]
check(by["writer_starved"] == dropped and sum(by.values()) == dropped,
      "starved: the JSON export's dropped_by_cause (%s)" % by)
words = "%d events dropped: writer stalled (wait cap) %d" % (dropped, dropped)
check(words in err, "starved: memtop -f names the cause (%r in %r)" % (words, err))
p = subprocess.run([a.memtop, "-f", rec, "--batch"], capture_output=True, text=True, timeout=300)
check(p.returncode == 0 and words in p.stdout, "starved: --batch names the cause")

grew = hwm_slow - hwm_fast
check(grew < BOUND_KB + WRITER_SLACK_KB,
      "bounded: the process grew by %d KiB over the same run without the delay (bound %d KiB)"
      % (grew, BOUND_KB))
print("all checks passed")
sys.exit(0)
