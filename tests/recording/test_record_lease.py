"""test_record_lease.py -- a recording a viewer started does not outlive the
viewer (docs/shm-protocol.md, "Recording lease").  The target runs with
MEMTOP_TEST_LEASE_MS=2000 (the bound, 10 s by default).  Fails without the
lease (the recording runs on for ever after memtop's death):
  1. `memtop -p PID --record FILE`, SIGKILL to memtop: within the bound
     (plus slack) the target stops the recording itself: status stopped,
     end reason lease (5) in the segment, FILE finalized with END reason 5
     (dat_dump) and no longer growing; the target still runs and publishes;
  2. the same with `--record -` (a stream: the file is unlinked, only the
     target's descriptor keeps it): stopped with reason 5, and the target
     no longer holds the deleted file open (its disk space is freed);
  3. a memtop that renews: recording for 3x the bound, never stopped; Ctrl-C
     stops it as before (END reason stop, exit 0);
  4. a SIGSTOP'd memtop: the recording stops after the bound; after SIGCONT
     memtop says so in one line and exits 1 (no crash), FILE finalized
     with END reason 5;
  5. recordings no viewer holds are untouched over 2x the bound: one
     started with RECORD_START (what a viewer older than leases sends) and
     one from MEMTOP_RECORD;
  6. Ctrl-C while memtop waits for the target to answer its start (the
     target stopped meanwhile): once the target runs again, memtop stops
     the recording itself (END reason stop, exit 0), not left to the lease.
A running recording is visible (3 and 5): `memtop --list`'s REC column
(the size, '*' when a viewer holds it), --batch's "recording:" line and
the JSON export's "live_recording" (held_by_viewer)."""
import json
import os
import re
import signal
import subprocess
import time

from test_writer_common import args, check, ctl, dump, env, start, wait_segment

LEASE_S = 2.0
SLACK_S = 4.0  # a loaded machine: the publisher polls every 20 ms, memtop dies at once

a = args()
prog = os.path.join(a.progs, "writer_cull")
tmp = os.path.join(a.workdir, "tmp")
os.makedirs(tmp)
menv = dict(os.environ, MEMTOP_SHM_DIR=a.workdir, TMPDIR=tmp)


def target(**extra):
    t = start([prog, "forever"], env=env(a, MEMTOP_TEST_LEASE_MS=int(LEASE_S * 1000), **extra),
              stdout=subprocess.DEVNULL)
    wait_segment(a, t.pid)
    time.sleep(0.5)
    return t


def status(pid):
    return ctl(a, pid, "status")[1]


def wait_state(pid, state, timeout, what):
    """The recording status of pid once its state is `state`, or a failed check."""
    end = time.time() + timeout
    while time.time() < end:
        st = status(pid)
        if st.get("rec_state") == state:
            return st
        time.sleep(0.1)
    check(False, "%s (status: %s)" % (what, status(pid)))


def memtop_record(t, path, **kw):
    m = start([a.memtop, "-p", str(t.pid), "--record", path], env=menv, stderr=subprocess.PIPE,
              text=True, **kw)
    st = wait_state(t.pid, "1", 15, "memtop started a recording")
    check(st["rec_lease_ms"] == "2000", "the recording is held by memtop (lease 2000 ms)")
    return m


def still_publishing(t):
    n1 = int(status(t.pid)["publish_count"])
    time.sleep(1.0)
    n2 = int(status(t.pid)["publish_count"])
    check(t.poll() is None and n2 > n1,
          "the target still runs and publishes (%d -> %d snapshots)" % (n1, n2))


def shown(pid, held, path):
    """--list, --batch and the JSON export show pid's running recording,
    held by a viewer or not."""
    lst = subprocess.run([a.memtop, "--list"], env=menv, capture_output=True, text=True, timeout=60)
    head = lst.stdout.splitlines()[0].split()
    row = [l for l in lst.stdout.splitlines() if l.split()[:1] == [str(pid)]]
    sizes = re.findall(r"[\d.]+ (?:B|[KMGT]iB)(\*?)", row[0]) if len(row) == 1 else []
    check(head[4] == "REC" and len(sizes) == 2 and (sizes[1] == "*") == held,
          "--list's REC column shows the recording%s: %s" % (" held (*)" if held else "", row))
    b = subprocess.run([a.memtop, "-p", str(pid), "--batch", "-n", "1"], env=menv,
                       capture_output=True, text=True, timeout=60)
    line = [l for l in b.stdout.splitlines() if l.startswith("recording: " + path)]
    want = "held by a viewer" if held else "held by no viewer"
    check(len(line) == 1 and want in line[0], "--batch says: %s" % line)
    out = os.path.join(a.workdir, "snap-%d.json" % pid)
    if os.path.exists(out):
        os.unlink(out)
    e = subprocess.run([a.memtop, "-p", str(pid), "--export", out], env=menv, capture_output=True,
                       text=True, timeout=60)
    lr = json.load(open(out)).get("live_recording") if e.returncode == 0 else None
    check(lr and lr["state"] == "on" and lr["path"] == path and lr["bytes"] > 0 and
          lr["held_by_viewer"] == held and
          (lr["lease_s"] == LEASE_S if held else lr["lease_s"] is None),
          "the JSON export's live_recording: %s" % lr)


def finalized_by_lease(path):
    info, _, _ = dump(a, path)
    check(info["finalized"] == 1 and info["end_reason"] == 5,
          "%s is finalized with END reason lease (finalized %s, reason %s)"
          % (os.path.basename(path), info["finalized"], info["end_reason"]))


# 1. A file, memtop killed.
t = target()
f1 = os.path.join(a.workdir, "killed.dat")
m = memtop_record(t, f1)
rc, out = ctl(a, t.pid, "start", os.path.join(a.workdir, "second.dat"))
check(rc != 0 and "already recording" in out.get("msg", "") and out.get("rec_lease_ms") == "2000",
      "a second start is refused, and leaves the running recording's lease")
time.sleep(1.0)
m.kill()
m.wait()
killed_at = time.time()
st = wait_state(t.pid, "2", LEASE_S + SLACK_S, "the target stopped the dead memtop's recording")
took = time.time() - killed_at
check(st["rec_end_reason"] == "5" and "did not renew" in st["rec_message"],
      "stopped %.1f s after memtop's death, end reason lease: %s" % (took, st["rec_message"]))
check(took >= LEASE_S - 0.5, "not before the bound (%.1f s)" % took)
size = os.path.getsize(f1)
time.sleep(1.0)
check(os.path.getsize(f1) == size, "the file no longer grows (%d bytes)" % size)
finalized_by_lease(f1)
still_publishing(t)

# 2. A stream, memtop killed: the target held an unlinked file.
f2_pipe = open(os.path.join(a.workdir, "stream.out"), "wb")
m = memtop_record(t, "-", stdout=f2_pipe)


def stream_fds(pid):
    fds = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if "stream.dat" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                fds.append(fd)
        except OSError:
            pass
    return fds


check(len(stream_fds(t.pid)) == 1, "the target writes the stream's file")
time.sleep(1.0)
m.kill()
m.wait()
st = wait_state(t.pid, "2", LEASE_S + SLACK_S, "the target stopped the dead streamer's recording")
check(st["rec_end_reason"] == "5", "end reason lease")
end = time.time() + 5
while stream_fds(t.pid) and time.time() < end:
    time.sleep(0.1)
check(stream_fds(t.pid) == [], "the target closed the deleted stream file (its space is freed)")
still_publishing(t)

# 3. A memtop that renews: not stopped over 3x the bound.
f3 = os.path.join(a.workdir, "renewed.dat")
m = memtop_record(t, f3)
end, states = time.time() + 3 * LEASE_S + 0.5, set()
while time.time() < end:
    states.add(status(t.pid)["rec_state"])
    time.sleep(0.2)
shown(t.pid, True, f3)
check(states == {"1"}, "recording all along for %.0f s, 3x the bound (states seen: %s)"
      % (3 * LEASE_S, sorted(states)))
m.send_signal(signal.SIGINT)
_, err = m.communicate(timeout=30)
check(m.returncode == 0, "Ctrl-C stops it, exit 0: %s" % err[-300:])
info, _, _ = dump(a, f3)
check(info["finalized"] == 1 and info["end_reason"] == 1, "finalized with END reason stop")

# 4. A stopped memtop.
f4 = os.path.join(a.workdir, "stopped.dat")
m = memtop_record(t, f4)
time.sleep(0.5)
m.send_signal(signal.SIGSTOP)
st = wait_state(t.pid, "2", LEASE_S + SLACK_S, "the target stopped a SIGSTOP'd memtop's recording")
check(st["rec_end_reason"] == "5", "end reason lease")
m.send_signal(signal.SIGCONT)
_, err = m.communicate(timeout=30)
said = [l for l in err.splitlines() if "did not renew" in l]
check(m.returncode == 1 and len(said) == 1,
      "after SIGCONT memtop says so once and exits 1 (rc %d): %s" % (m.returncode, said))
check("Traceback" not in err and "Segmentation" not in err, "no crash")
finalized_by_lease(f4)
still_publishing(t)

# 4b. A stopped memtop whose recording ended, and another memtop's started since: after
# SIGCONT the first says its own ended and exits 1, and leaves the second's running (it
# stopped and reported the new one as its own before).
f4b, f4c = (os.path.join(a.workdir, n) for n in ("lost.dat", "next.dat"))
m = memtop_record(t, f4b)
time.sleep(0.5)
m.send_signal(signal.SIGSTOP)
wait_state(t.pid, "2", LEASE_S + SLACK_S, "the target stopped a SIGSTOP'd memtop's recording")
m2 = memtop_record(t, f4c)
m.send_signal(signal.SIGCONT)
_, err = m.communicate(timeout=30)
check(m.returncode == 1 and "ended this memtop's recording" in err and f4c not in err,
      "after SIGCONT the first memtop says its recording ended, exit 1 (rc %d): %s"
      % (m.returncode, err[-300:]))
time.sleep(1.0)
st = status(t.pid)
check(st["rec_state"] == "1" and st.get("rec_path", f4c) == f4c,
      "the second memtop's recording still runs (status %s)" % st)
m2.send_signal(signal.SIGINT)
_, err2 = m2.communicate(timeout=30)
check(m2.returncode == 0, "the second memtop stops its own, exit 0: %s" % err2[-300:])
finalized_by_lease(f4b)

# 6. Ctrl-C before the target answered the start (stopped meanwhile): memtop stops the
# recording as soon as it runs (it was killed by the SIGINT, and the recording ran on until
# the lease's bound).
f7 = os.path.join(a.workdir, "early.dat")
t.send_signal(signal.SIGSTOP)
m = start([a.memtop, "-p", str(t.pid), "--record", f7], env=menv, stderr=subprocess.PIPE,
          text=True)
time.sleep(0.5)  # memtop waits for the start's answer
m.send_signal(signal.SIGINT)
time.sleep(0.3)
t.send_signal(signal.SIGCONT)
_, err = m.communicate(timeout=30)
end = time.time() + LEASE_S + SLACK_S
while True:  # its own status, not the last recording's (stopped too)
    st = status(t.pid)
    if (st.get("rec_path") == f7 and st.get("rec_state") == "2") or time.time() > end:
        break
    time.sleep(0.1)
check(st.get("rec_path") == f7 and st.get("rec_state") == "2",
      "the early Ctrl-C'd recording stopped (status %s)" % st)
check(m.returncode == 0 and st["rec_end_reason"] == "1",
      "a Ctrl-C during the start stops the recording at once (exit %d, END reason %s, not the "
      "lease's 5): %s" % (m.returncode, st["rec_end_reason"], err[-300:]))

# 5. No lease: a RECORD_START (an older viewer's) and MEMTOP_RECORD.
f5 = os.path.join(a.workdir, "unleased.dat")
rc, out = ctl(a, t.pid, "start", f5)
check(rc == 0 and out.get("rec_lease_ms") == "0", "RECORD_START: a recording without a lease")
f6 = os.path.join(a.workdir, "env.dat")
t2 = target(MEMTOP_RECORD=f6)
check(status(t2.pid).get("rec_lease_ms") == "0", "MEMTOP_RECORD: a recording without a lease")
time.sleep(2 * LEASE_S + 1)
check(status(t.pid)["rec_state"] == "1", "the unleased recording runs on after 2x the bound")
shown(t.pid, False, f5)
check(status(t2.pid)["rec_state"] == "1", "MEMTOP_RECORD's recording runs on after 2x the bound")
rc, out = ctl(a, t.pid, "stop")
check(rc == 0 and out.get("rec_end_reason") == "1", "stopped by the control channel")
for p in (t, t2):
    p.kill()
    p.wait()
