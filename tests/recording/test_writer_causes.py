"""test_writer_causes.py -- real runs that drop events for each cause beyond
the disk's and the wait cap's (those two: test_writer_backlog.py), and the
count attributed to that cause everywhere: the file's LOST records
(dat_dump), `memtop -f FILE --batch`, the JSON export's dropped_by_cause
(summing to events_dropped), and the live status (writer_ctl: what the
viewer's header and `memtop --serve` read, total and causes one set).

writer_causes.c is the target:
 - could not wait: allocations and frees inside a dl_iterate_phdr callback
   (the loader's lock held: a hook there may not wait for the writer)
   while the writer sleeps 2 s between passes (MEMTOP_TEST_WRITER_STALL_MS):
   the thread's buffer reaches its bound (262,144 events) and every later
   event is dropped at once, all "hook could not wait";
 - no buffer: a new thread's first allocations while the address space is
   limited (RLIMIT_AS) just above what the process maps, so its buffer's
   first chunk (256 KiB, mmap) cannot be had: its 100 allocations and 100
   frees are all dropped, exactly 200, "no buffer memory";
 - initial-state capture: `memtop -p PID --record` started while two
   threads allocate and 12 M blocks are live: the capture's pause (~300 ms
   under ctest at load 6; 45 ms with 6 M blocks, too short) outlasts the
   gate's 50 ms, calls stop waiting, and their events during the pause are
   counted "initial-state capture" (as many as the target's log says); a
   pause too short for that is retried once with twice the blocks;
 - missed at the end: a thread held (by gdb, in non-stop mode: as if
   preempted) between the accounting of an allocation and its event
   (mt_rec_alloc's entry) while the recording is stopped: the final state
   counts the allocation, no event has it: exactly 1 event "missed at the
   end".  Skipped (said so) without gdb, on another architecture than
   x86-64 (the breakpoint's condition reads the size from rcx) or when
   libmemtop.so has no symbol table.
And the live status's bound: a target stopped with the status's seqlock
word left odd (a publisher that died mid-write) is read as "status not
known" within the reader's bound, never as a torn set.
"""
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

from test_writer_common import args, check, dump

CAUSES = ["disk_behind", "writer_starved", "could_not_wait", "no_buffer", "initial_capture",
          "missed_at_end"]
WORDS = {"could_not_wait": "hook could not wait", "no_buffer": "no buffer memory",
         "initial_capture": "initial-state capture", "missed_at_end": "missed at the end"}
a = args()
prog = os.path.join(a.progs, "writer_causes")


def target_env(**extra):
    e = dict(os.environ)
    e.update({"LD_PRELOAD": a.preload, "MEMTOP_SHM_DIR": a.workdir, "MEMTOP_LOG": "info",
              "MEMTOP_START_MS": "0"})
    e.pop("MEMTOP_RECORD", None)
    e.update({k: str(v) for k, v in extra.items()})
    return e


def fresh(name):
    rec = os.path.join(a.workdir, name + ".dat")
    if os.path.exists(rec):
        os.unlink(rec)
    return rec


def status(pid):
    """The live recording status as a viewer reads it (writer_ctl)."""
    for _ in range(100):  # the segment may not exist yet (MEMTOP_START_MS)
        p = subprocess.run([a.ctl, a.workdir, str(pid), "status"], capture_output=True,
                           text=True, timeout=60)
        if "no such segment" not in p.stderr:
            break
        time.sleep(0.1)
    st = dict(re.findall(r"^(rec_\w+) (.*)$", p.stdout, re.M))
    check("rec_dropped" in st, "writer_ctl status answers (%s)" % (p.stdout + p.stderr))
    return st


def check_live_set(name, st, cause):
    """The live status's total is the sum of its causes, and cause has them all."""
    why = [int(st["rec_why_%d" % i]) for i in range(8)]
    n = int(st["rec_dropped"])
    check(n == sum(why) and why[CAUSES.index(cause)] == n and n > 0,
          "%s: the live status says %d dropped, all %s (%s)" % (name, n, cause, why))


def check_everywhere(name, rec, cause, exact=None, alone=True):
    """The file, --batch and the JSON export attribute the drops of cause to
    it: all of them (alone), or (not alone: a loaded machine may add drops
    of another cause) as many as exact.  Returns the cause's count."""
    info, _, _ = dump(a, rec)
    total = info["end_dropped"]
    file_why = {c: info.get("lost_why_%d" % i, 0) for i, c in enumerate(CAUSES)}
    n = file_why[cause]
    print("%s: causes in the file: %s" % (name, file_why))
    check(n > 0 and (exact is None or n == exact),
          "%s: events were dropped for %s (%d%s)" % (name, cause, n, "" if exact is None
                                                      else ", %d expected" % exact))
    check(sum(file_why.values()) == total and info["lost_unsaid"] == 0 and (n == total or
                                                                            not alone),
          "%s: the file's LOST records give %d of %d the cause %s" % (name, n, total, cause))
    check(info["lost_alloc"] + info["lost_free"] == total,
          "%s: the LOST records count every drop (%d + %d)" % (name, info["lost_alloc"],
                                                              info["lost_free"]))
    words = ("%d event%s dropped: " % (total, "" if total == 1 else "s") if alone else "") + \
        "%s %d" % (WORDS[cause], n)
    p = subprocess.run([a.memtop, "-f", rec, "--batch"], capture_output=True, text=True,
                       timeout=300)
    line = re.search(r"^warning: recording inexact: .*$", p.stdout, re.M)
    check(p.returncode == 0 and line and words in line.group(0),
          "%s: --batch says %r (%s)" % (name, words, (p.stdout + p.stderr)[-600:]))
    out = rec + ".json"
    p = subprocess.run([a.memtop, "-f", rec, "--export", out], capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "%s: memtop -f --export exits 0 (%s)" % (name, p.stderr.strip()))
    r = json.load(open(out))["recording"]
    by = r["dropped_by_cause"]
    check(r["events_dropped"] == total and by[cause] == n and sum(by.values()) == total,
          "%s: the JSON export's dropped_by_cause gives %d to %s (%s)" % (name, n, cause, by))
    return n


def log_counts(err):
    m = re.search(r"(\d+) events dropped \(disk behind (\d+), wait cap (\d+), could not wait "
                  r"(\d+), no buffer (\d+)\)", err)
    check(m is not None, "the drops by cause are logged")
    return [int(x) for x in m.groups()]


def could_not_wait():
    name = "could_not_wait"
    rec = fresh(name)
    p = subprocess.Popen([prog, "dliter", "300000"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=target_env(MEMTOP_RECORD=rec, MEMTOP_TEST_WRITER_STALL_MS=2000))
    check(p.stdout.readline().startswith("start"), "%s: the target runs" % name)
    check(p.stdout.readline().startswith("callback done"), "%s: the callback ran" % name)
    time.sleep(0.1)  # the status is published every 20 ms
    check_live_set(name, status(p.pid), name)
    out, err = p.communicate(timeout=300)
    check(p.returncode == 0 and "done" in out, "%s: ran and recorded" % name)
    n = check_everywhere(name, rec, name)
    logged = log_counts(err)
    check(logged[0] == n and logged[3] == n, "%s: the hooks counted them so (%s)" % (name, logged))


def no_buffer():
    name = "no_buffer"
    rec = fresh(name)
    p = subprocess.run([prog, "nobuf", "100"], capture_output=True, text=True, timeout=300,
                       env=target_env(MEMTOP_RECORD=rec))
    check(p.returncode == 0 and "done" in p.stdout and "stopped" not in p.stderr,
          "%s: ran and recorded (%s)" % (name, p.stderr.strip()[-400:]))
    check_everywhere(name, rec, name, exact=200)
    logged = log_counts(p.stderr)
    check(logged[0] == 200 and logged[4] == 200, "%s: the hooks counted them so (%s)"
          % (name, logged))


def initial_capture():
    name = "initial_capture"
    blocks = 12000000
    for attempt in range(2):
        rec = fresh("%s%d" % (name, attempt))
        t = subprocess.Popen([prog, "live", str(blocks), "6"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=target_env())
        line = t.stdout.readline()
        check(line.startswith("ready "), "%s: the target runs (%r)" % (name, line))
        r = subprocess.run([a.memtop, "-p", str(t.pid), "--record", rec], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, MEMTOP_SHM_DIR=a.workdir))
        out, err = t.communicate(timeout=300)
        check(r.returncode == 0 and t.returncode == 0,
              "%s: memtop --record and the target ran (%s)" % (name, r.stderr.strip()[-400:]))
        m = re.search(r"initial state approximate: (\d+) events during its capture", err)
        pause = re.search(r"initial state copied in a ([0-9.]+) ms pause", err)
        print("%s: %d live blocks, %s ms pause, %s events during it" %
              (name, blocks, pause and pause.group(1), m and m.group(1)))
        if m:
            break
        blocks *= 2
    check(m is not None, "%s: events were made during the capture" % name)
    # Two threads allocating flat out on a loaded machine may also make the
    # writer drop for another cause: only this cause's count is checked.
    n = check_everywhere(name, rec, name, exact=int(m.group(1)), alone=False)
    words = "%s %d" % (WORDS[name], n)
    check("inexact: " in r.stdout and words in r.stdout,
          "%s: memtop --record says %r (%r)" % (name, words, r.stdout))


def gdb_skip_reason():
    if platform.machine() != "x86_64":
        return "not x86-64"
    if not shutil.which("gdb"):
        return "no gdb"
    nm = subprocess.run(["nm", a.preload], capture_output=True, text=True)
    if not re.search(r" [tT] mt_rec_alloc$", nm.stdout, re.M):
        return "libmemtop.so has no symbol mt_rec_alloc"
    return None


def missed_at_end():
    name = "missed_at_end"
    why = gdb_skip_reason()
    if why:
        print("skipped: %s: %s" % (name, why))
        return
    rec = fresh(name)
    script = os.path.join(a.workdir, "park.gdb")
    with open(script, "w") as f:
        f.write("set pagination off\nset confirm off\nset non-stop on\n"
                "set startup-with-shell off\nset breakpoint pending on\n"
                "set environment LD_PRELOAD %s\n" % a.preload +
                "break mt_rec_alloc if $rcx == 777777\nrun\n"
                # no trap left for another thread while gdb sleeps (it would
                # wait there for ever); the held thread stays stopped
                "delete\necho PARKED\\n\nshell sleep 600\n")
    e = dict(os.environ, MEMTOP_SHM_DIR=a.workdir, MEMTOP_RECORD=rec, MEMTOP_START_MS="0",
             MEMTOP_LOG="info")
    e.pop("LD_PRELOAD", None)
    g = subprocess.Popen(["gdb", "-q", "-batch", "-x", script, "--args", prog, "park"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e,
                         start_new_session=True)
    pid, parked, seen = None, False, []
    deadline = time.time() + 120
    while time.time() < deadline and not parked:
        line = g.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.match(r"ready (\d+)", line)
        if m:
            pid = int(m.group(1))
        parked = line.startswith("PARKED")
    try:
        check(pid and parked, "%s: a thread is held inside its allocation (%s)"
              % (name, "".join(seen)[-800:]))
        p = subprocess.run([a.ctl, a.workdir, str(pid), "stop"], capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 0, "%s: the recording stops (%s)" % (name, p.stdout + p.stderr))
        st = status(pid)
        check(st["rec_state"] == "2", "%s: stopped" % name)
        check_live_set(name, st, name)
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
        os.killpg(g.pid, signal.SIGKILL)
        g.wait()
    check_everywhere(name, rec, name, exact=1)


def stat_state(pid, tid):
    with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def stuck_publisher():
    """A target stopped (SIGSTOP) with its status's seqlock word left odd, as
    a publisher that died in the middle of a write leaves it: a viewer's
    read gives up within its bound and says the status is not known, never
    a torn set; once the target runs again its next publish makes the word
    even and the status reads again."""
    name = "stuck_publisher"
    rec = fresh(name)
    t = subprocess.Popen([prog, "live", "1000", "3"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=target_env(MEMTOP_RECORD=rec))
    check(t.stdout.readline().startswith("ready "), "%s: the target runs" % name)
    st = status(t.pid)
    check(st.get("rec_state") == "1", "%s: recording (%s)" % (name, st))
    os.kill(t.pid, signal.SIGSTOP)
    try:
        for _ in range(500):  # all stopped: no publish overwrites the word after us
            if all(stat_state(t.pid, tid) == "T" for tid in os.listdir("/proc/%d/task" % t.pid)):
                break
            time.sleep(0.01)
        off = int(st["rec_seq_offset"])
        with open(os.path.join(a.workdir, "memtop-%d" % t.pid), "r+b") as f:
            f.seek(off)
            seq = int.from_bytes(f.read(8), "little")
            f.seek(off)
            f.write((seq | 1).to_bytes(8, "little"))
        t0 = time.time()
        p = subprocess.run([a.ctl, a.workdir, str(t.pid), "status"], capture_output=True,
                           text=True, timeout=60)
        took = time.time() - t0
        check("rec_error recording status not known: no stable read" in p.stdout
              and "rec_dropped" not in p.stdout,
              "%s: the read gives up and says the status is not known (%s)" % (name, p.stdout))
        check(took < 5, "%s: within its bound (writer_ctl took %.2f s)" % (name, took))
    finally:
        os.kill(t.pid, signal.SIGCONT)
    time.sleep(0.2)  # the next publish, every 20 ms
    check(status(t.pid).get("rec_state") == "1", "%s: read again once the target runs" % name)
    t.communicate(timeout=120)
    check(t.returncode == 0, "%s: the target ends" % name)


stuck_publisher()
could_not_wait()
no_buffer()
initial_capture()
missed_at_end()
print("all checks passed")
sys.exit(0)
