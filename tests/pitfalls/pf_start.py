#!/usr/bin/env python3
"""Short processes (publish_thread.c, "Short processes"): the segment is
created MEMTOP_START_MS after start by the publisher thread, not at start.

 - a process that exits at once never creates a segment: with an unusable
   MEMTOP_SHM_DIR it says nothing, and it finds the same lowest free
   descriptor as without memtop (libunwind, whose initialisation opens a
   pipe, is initialised only before its first walk) (with MEMTOP_START_MS=0 it warns: the
   control that the check can see a creation);
 - the same process with MEMTOP_KEEP_PID (what `memtop -- PROG` sets)
   creates it at once and its final snapshot is exact;
 - a long-lived process that never allocates after its start gets its
   segment all the same, with exact counts, and a viewer attaches to it;
 - a process whose pre-exec image published starts publishing at once
   after the exec (MEMTOP_START_MS of an hour in the new image);
 - a process whose exec fails within MEMTOP_START_MS (which holds the
   publisher thread in its first wait: publish_thread.c) gets its segment
   all the same;
 - libunwind's probe (unwind_libunwind.c mt_libunwind_probe) runs only in a
   process that lives MEMTOP_START_MS: not in the short one, in the idle one;
   and on a thread of its own (publish_thread.c probe_libunwind), so that
   the 256 KiB frame cache unw_backtrace gives the thread that calls it is
   freed at once: the idle process has no anonymous mapping that holds
   256 KiB (on the publisher, the cache stayed for the process's life);
 - libzstd is loaded only by a process that records (record_zstd_lib.c):
   the idle process above does not map it, the same with MEMTOP_RECORD
   does, and its recording is complete;
 - libm is not loaded (libmemtop.so does not depend on it: sample_math.h),
   in the idle process above, which does not link it either."""
import os
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test, marker, wait_for  # noqa: E402

NO_DIR_MSG = r"cannot create"
PROBED_MSG = "libunwind probed"


def read_pid(path):
    try:
        return int(open(path).read())
    except (OSError, ValueError):
        return None


def snapshot_with(t, seg, size, live, cmd_word="pf_start"):
    """seg's snapshot once it shows `live` blocks of `size` bytes and its
    cmdline has cmd_word (the first snapshot may precede them), else None."""
    def ready():
        snap = t.segment_json(seg, quiet=True)
        return snap if (snap and cmd_word in (snap.get("cmdline") or "") and
                        marker(snap, size)["live_count"] >= live) else None
    return wait_for(ready)


def sanitizer_runtime(t, prog):
    """Whether the library under test brings a sanitizer's runtime (the
    sanitize tree: tests/sanitize/).  That runtime depends on libm (through
    libstdc++), and one of its allocations is one the own walker leaves to
    libunwind, which then initialises at start: the checks of what memtop
    itself adds do not apply."""
    res = t.run([prog], "the preloaded libraries",
                env={"LD_PRELOAD": t.lib, "LD_TRACE_LOADED_OBJECTS": "1"})
    return "libubsan" in res.out or "libasan" in res.out


def short(t, prog, sanitized):
    plain = t.run_plain([prog, "short"])
    if not t.expect(plain, 3) or not t.have_lib:
        return False
    bad = {"MEMTOP_SHM_DIR": t.path("no/such/dir")}
    deferred = t.run([prog, "short"], "short, unusable MEMTOP_SHM_DIR",
                     env={"LD_PRELOAD": t.lib, **bad})
    # Same output, lowest free descriptor included: memtop left none open
    # (libunwind's pipe is made only before its first walk).
    same = deferred.out == plain.out or (
        sanitized and deferred.out.split(",")[0] == plain.out.split(",")[0])
    t.check(deferred.rc == 3 and same, "%s; plain printed %r" % (deferred.describe(), plain.out))
    t.check_quiet(deferred)  # no segment was ever attempted
    at_once = t.run([prog, "short"], "short, MEMTOP_START_MS=0",
                    env={"LD_PRELOAD": t.lib, "MEMTOP_START_MS": "0", **bad})
    t.check(at_once.rc == 3, at_once.describe())
    t.check_quiet(at_once, expect_msg=NO_DIR_MSG)
    debug = t.run([prog, "short"], "short, MEMTOP_LOG=debug",
                  env={"LD_PRELOAD": t.lib, "MEMTOP_LOG": "debug", **bad})
    t.check(debug.rc == 3 and PROBED_MSG not in debug.err,
            "%s: libunwind's probe ran in a short process" % debug.describe())
    shm = t.shm_dir("shm-kept")
    res, snap = t.run_kept([prog, "short"], shm)
    t.check(res.rc == 3, res.describe())
    if t.check_snapshot(snap, "short, MEMTOP_KEEP_PID"):
        t.check_marker(snap, 1019, "short, MEMTOP_KEEP_PID", alloc=7, free=5, live=2)
    return True


def attach(t, pid, shm):
    """memtop -p PID finds the segment and shows the program."""
    if not t.memtop:
        return
    res = t.run([t.memtop, "-p", str(pid), "--batch", "-n", "1"], "memtop -p %d" % pid,
                env={"MEMTOP_SHM_DIR": shm})
    t.check(res.rc == 0 and "pf_start" in res.out, res.describe())


def idle(t, prog, shm, extra, mode="idle"):
    """Starts `pf_start idle` (or MODE); returns (process, pid, its snapshot
    once it shows its 20 live 1013-byte blocks, or None)."""
    pidfile = t.path("idle.pid")
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    p = t.popen_preloaded([prog, mode, pidfile], shm, extra)
    pid = wait_for(lambda: read_pid(pidfile))
    if pid is None:
        return p, None, None
    return p, pid, snapshot_with(t, os.path.join(shm, "memtop-%d" % pid), 1013, 20)


def finish(t, p, what):
    out, err = p.communicate("x\n", timeout=60)
    t.check(p.returncode == 0 and out == "idle ready\n",
            "%s: exit %s, stdout %r; stderr:\n%s" % (what, p.returncode, out, err[-2000:]))
    return err


def maps_lib(pid, name):
    """Whether process pid maps a file whose path has name (None: cannot tell)."""
    try:
        return name in open("/proc/%d/maps" % pid).read()
    except OSError:
        return None


def big_anonymous(pid, kib=256):
    """Process pid's anonymous mappings holding at least kib KiB of
    anonymous memory, as 'range: N kB' strings (None: cannot tell)."""
    try:
        lines = open("/proc/%d/smaps" % pid).read().splitlines()
    except OSError:
        return None
    found, head = [], None
    for line in lines:
        f = line.split()
        if f and "-" in f[0] and ":" not in f[0]:
            head = f[0] if len(f) < 6 else None  # no path: anonymous
        elif head and f[0] == "Anonymous:" and int(f[1]) >= kib:
            found.append("%s: %s kB" % (head, f[1]))
    return found


def idle_attach(t, prog, sanitized):
    shm = t.shm_dir("shm-idle")
    p, pid, snap = idle(t, prog, shm, {"MEMTOP_INTERVAL_MS": "20", "MEMTOP_LOG": "debug"})
    what = "idle process, default MEMTOP_START_MS"
    if t.check(snap is not None, "%s: no segment with its blocks appeared" % what):
        t.check(snap.get("exited") is not True, "%s: segment marked exited" % what)
        t.check_marker(snap, 1013, what, alloc=20, free=0, live=20)
        # glibc's malloc is recognised (hook_real_alloc.c malloc_is_glibc):
        # its own figure (mallinfo2) is published
        held = snap["totals"].get("allocator_bytes")
        t.check(isinstance(held, int) and held > 0,
                "%s: glibc's held bytes not published: %r" % (what, held))
        attach(t, pid, shm)
        t.check(maps_lib(pid, "libzstd") is False, "%s: libzstd is loaded without a recording" % what)
        t.check(sanitized or maps_lib(pid, "/libm.so") is False, "%s: libm is loaded" % what)
        big = big_anonymous(pid)
        t.check(sanitized or big == [],
                "%s: anonymous mappings of 256 KiB or more (libunwind's frame cache?): %r"
                % (what, big))
    err = finish(t, p, what)
    t.check(PROBED_MSG in err, "%s: libunwind's probe never ran; stderr:\n%s" % (what, err[-2000:]))
    t.check_no_segments(shm, "after the idle process exited")


def exec_follow(t, prog):
    shm = t.shm_dir("shm-exec")
    pidfile = t.path("exec.pid")
    p = t.popen_preloaded([prog, "exec", pidfile], shm,
                          {"MEMTOP_START_MS": "0", "MEMTOP_INTERVAL_MS": "20"})
    pid = wait_for(lambda: read_pid(pidfile))
    seg = os.path.join(shm, "memtop-%d" % (pid or 0))
    before = wait_for(lambda: t.segment_json(seg, quiet=True))
    what = "exec'd image with MEMTOP_START_MS=3600000"
    if t.check(before is not None, "the pre-exec image (MEMTOP_START_MS=0) has no segment"):
        os.unlink(pidfile)
        p.stdin.write("go\n")
        p.stdin.flush()
        t.check(wait_for(lambda: read_pid(pidfile)) == pid, "%s: never ran" % what)
        snap = snapshot_with(t, seg, 1013, 20, cmd_word="idle")
        if t.check(snap is not None, "%s: its segment did not replace the old one" % what):
            t.check(snap.get("exited") is not True, "%s: segment marked exited" % what)
            t.check_marker(snap, 1013, what, alloc=20, free=0, live=20)
    finish(t, p, what)
    t.check_no_segments(shm, "after the exec'd process exited")


def exec_failed(t, prog):
    shm = t.shm_dir("shm-execfail")
    p, pid, snap = idle(t, prog, shm, {"MEMTOP_INTERVAL_MS": "20"}, mode="execfail")
    what = "process whose exec failed at start"
    if t.check(snap is not None, "%s: no segment with its blocks appeared" % what):
        t.check_marker(snap, 1013, what, alloc=20, free=0, live=20)
    finish(t, p, what)
    t.check_no_segments(shm, "after the process whose exec failed exited")


def idle_recording(t, prog):
    shm = t.shm_dir("shm-record")
    dat = t.path("idle.dat")
    if os.path.exists(dat):
        os.unlink(dat)
    p, pid, snap = idle(t, prog, shm, {"MEMTOP_INTERVAL_MS": "20", "MEMTOP_RECORD": dat})
    what = "idle process with MEMTOP_RECORD"
    if t.check(snap is not None, "%s: no segment with its blocks appeared" % what):
        t.check(maps_lib(pid, "libzstd") is True, "%s: libzstd is not loaded" % what)
    finish(t, p, what)
    if t.memtop:
        res = t.run([t.memtop, "-f", dat, "--batch"], "memtop -f the recording")
        t.check(res.rc == 0 and "pf_start" in res.out, res.describe())


t = Test("start")
prog = t.prog("pf_start")
sanitized = t.have_lib and sanitizer_runtime(t, prog)
if short(t, prog, sanitized):
    idle_attach(t, prog, sanitized)
    idle_recording(t, prog)
    exec_follow(t, prog)
    exec_failed(t, prog)
t.finish()
