"""test_writer_errors.py -- recordings that cannot be made or continued
never hurt the target.  A bad MEMTOP_RECORD pattern, a missing directory
and an existing file each give one clear warning on stderr (a 5000-character pattern names its
error, ENAMETOOLONG) and no
recording, and the program's output and exit code are unchanged.  A write
error in the middle (RLIMIT_FSIZE: EFBIG, as a full disk) stops the
recording with a warning; the target runs on and exits normally, and the
file is readable up to its last complete frame, then END(ERROR, EFBIG)
written over the partly written frame (within the limit).  So for every
limit, swept across a short recording: the error may come while the final
state is written, or leave no room for END after the last complete frame
(the frame before it then makes room); the file is never left with a
partial frame, and ends with END unless only the definitions' frame fits."""
import errno
import os
import resource
import signal
import subprocess

from test_writer_common import args, check, dump, env, fail

a = args()


def run(pattern, seconds="0", preexec=None):
    return subprocess.run([a.demo, seconds], env=env(a, MEMTOP_RECORD=pattern),
                          capture_output=True, text=True, timeout=60, preexec_fn=preexec)


plain = subprocess.run([a.demo, "0"], capture_output=True, text=True, timeout=60)
for pattern, why in [(os.path.join(a.workdir, "bad-%q.dat"), "bad recording file name"),
                     (os.path.join(a.workdir, "trailing-%"), "bad recording file name"),
                     (os.path.join(a.workdir, "no/such/dir/x.dat"), "No such file")]:
    r = run(pattern)
    check(r.returncode == 0 and r.stdout == plain.stdout, "%s: program unaffected" % pattern)
    check(why in r.stderr and "not recording" in r.stderr, "%s: warns '%s'" % (pattern, why))
check(not [f for f in os.listdir(a.workdir) if f.endswith(".dat") or f.startswith("bad")],
      "no file was created")

# A name too long for the pattern buffer: refused whole (never cut to another
# name), the error named, never a bare "(errno)".
long_pattern = os.path.join(a.workdir, "x" * (5000 - len(a.workdir) - 1))
r = run(long_pattern)
check(r.returncode == 0 and r.stdout == plain.stdout, "5000-character pattern: program unaffected")
check("File name too long (ENAMETOOLONG)" in r.stderr and "(errno)" not in r.stderr and
      "not recording" in r.stderr,
      "5000-character pattern: the error is named: %s" % r.stderr.strip()[-160:])

# The recording's variables warn as every other: "memtop[PID]: warning:
# NAME='value' is not ...; using DEFAULT" (before: "memtop[PID]: memtop:
# NAME=value: not ...; tick", and MEMTOP_RECORD's error "memtop: memtop:").
r = subprocess.run([a.demo, "0"], env=env(a, MEMTOP_RECORD_ORDER="bogus", MEMTOP_RECORD_MODE="zz",
                                          MEMTOP_CULL_SECS="x", MEMTOP_CULL_BLOCKS="y"),
                   capture_output=True, text=True, timeout=60)
for want in ("warning: MEMTOP_RECORD_ORDER='bogus' is not tick or thread; using tick",
             "warning: MEMTOP_RECORD_MODE='zz' is not full or culled; using full",
             "warning: MEMTOP_CULL_SECS='x' is not a number of seconds",
             "warning: MEMTOP_CULL_BLOCKS='y' is not a whole number"):
    check(want in r.stderr, "the warning %r in %r" % (want, r.stderr))
check("memtop: memtop" not in r.stderr and "memtop: memtop" not in run(
    os.path.join(a.workdir, "bad-%q.dat")).stderr, "no doubled 'memtop:' prefix")

existing = os.path.join(a.workdir, "existing.dat")
open(existing, "w").write("precious")
r = run(existing)
check("exists" in r.stderr and open(existing).read() == "precious",
      "an existing file is never overwritten")

# %n picks the first free number.
r1 = run(os.path.join(a.workdir, "n-%n.dat"))
r2 = run(os.path.join(a.workdir, "n-%n.dat"))
check(os.path.exists(os.path.join(a.workdir, "n-0.dat")) and
      os.path.exists(os.path.join(a.workdir, "n-1.dat")), "%n gives successive files 0, 1")


def limited(n):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return preexec


# 1500 bytes: a 4 s recording of memtop-demo is about 2 KB in format
# version 7 (2.4 KB and more before), its definitions about 1 KB.
full = os.path.join(a.workdir, "full.dat")
r = run(full, seconds="4", preexec=limited(1500))
check(r.returncode == 0, "the target exits 0 after the write error")
check("recording stopped: write error" in r.stderr, "the write error is reported: %s"
      % r.stderr.strip().splitlines()[-1:])
info, _, _ = dump(a, full)
check(info["frames"] >= 2 and info["allocs"] > 0 and info["truncated"] == 0,
      "the file reads up to its last complete frame (%d frames), then END: %s" % (info["frames"], info))
check(info["finalized"] == 1 and info["end_reason"] == 4 and info["end_error"] == errno.EFBIG,
      "the file ends with END(ERROR, EFBIG): finalized %s, reason %s, error %s" %
      (info["finalized"], info["end_reason"], info["end_error"]))
check(os.path.getsize(full) <= 1500, "nothing was written past the error")

# The sweep: a limit every few bytes across a `memtop-demo 0` recording (4
# frames: definitions, events, final state, END), so that about 150 limits
# fall short of the whole file, whatever its size (tick order made it
# smaller: MEMTOP_RECORD_ORDER).
whole = os.path.join(a.workdir, "whole.dat")
check(run(whole).returncode == 0 and os.path.exists(whole), "an unlimited recording")
size = os.path.getsize(whole)
step = max(1, (size - 100) // 150)
swept = errors = 0
for limit in range(100, size + 200, step):
    path = os.path.join(a.workdir, "limit-%d.dat" % limit)
    r = run(path, preexec=limited(limit))
    if r.returncode != 0:
        fail("limit %d: the target exits 0 (rc %d)" % (limit, r.returncode))
    if not os.path.exists(path):
        continue  # not even the definitions fit: no recording
    swept += 1
    info, _, d = dump(a, path, expect_ok=False)
    where = "limit %d (%d bytes): %s" % (limit, os.path.getsize(path), d.stdout.replace("\n", " ")[:200])
    if d.returncode != 0 or info["truncated"] != 0 or os.path.getsize(path) > limit:
        fail("%s: reads without a partial frame, within the limit" % where)
    if info["finalized"] == 1 and info["end_reason"] != 4:
        continue  # the whole recording fitted
    errors += 1
    if info["frames"] >= 2 and not (info["finalized"] == 1 and info["end_error"] == errno.EFBIG):
        fail("%s: ends with END(ERROR, EFBIG)" % where)
    os.unlink(path)
check(swept > 100 and errors > 100, "every limit: no partial frame, END(ERROR, EFBIG) after the "
      "definitions (%d limits, %d with the error)" % (swept, errors))
