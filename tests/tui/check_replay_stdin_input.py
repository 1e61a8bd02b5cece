"""check_replay_stdin_input.py -- `memtop -f -` (src/ipc/dat_stdin.c)
against what a pipe may bring and the signals a pipeline gets.

  - a stream that is not a recording (`yes | memtop -f -`) is refused on
    its first bytes: exit 1, one line "not a memtop recording (bad
    magic)", while its writer still has the pipe open.  Before, memtop
    copied it into TMPDIR to its end (with `yes`: until the disk was full)
    and only then said so;
  - SIGINT ignored when memtop started (a script's background job, nohup)
    stays ignored while the stream is copied: a SIGINT then does not cut
    the copy short (the report is the whole recording's, no "truncated").
    Before, memtop's own handler replaced SIG_IGN, and such a SIGINT
    opened half a recording;
  - the viewer's "reading FILE (N MB)" line for a large recording is the
    copy's, not that of a file named "-" in the working directory: with a
    sparse 100 MB "-" there and a small recording piped in, no such line.
    Before: "memtop: reading - (100 MB) ..."."""
import os
import shlex
import signal
import subprocess
import time

import tuilib
from tuilib import check, header_line

SECONDS = 2


def test_not_a_recording(t):
    p = subprocess.Popen([t.memtop, "-f", "-", "--batch"], env=t.env, cwd=t.workdir,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        p.stdin.write(b"y\n" * 4096)  # and the pipe stays open: no end to wait for
        p.stdin.flush()
    except BrokenPipeError:
        pass  # refused already
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        check(False, "a stream that is not a recording was still being copied after 10 s")
    finally:
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
    err = p.stderr.read().decode(errors="replace")
    check(p.returncode == 1 and err.count("\n") == 1 and
          err.startswith("memtop: standard input: not a memtop recording (bad magic)"),
          "not a recording: exit 1 (%d), one line: %r" % (p.returncode, err))
    print("ok: refused on its first bytes: %s" % err.strip())


def test_sigint_ignored(t, data, want):
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
    p = subprocess.Popen([t.memtop, "-f", "-", "--batch"], env=t.env, cwd=t.workdir,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=ignore)
    half = len(data) // 2
    p.stdin.write(data[:half])
    p.stdin.flush()
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    time.sleep(1.2)  # past the half second a Ctrl-C waits for more
    try:
        p.stdin.write(data[half:])
        p.stdin.close()
    except BrokenPipeError:
        pass  # memtop stopped reading: its report says what it got
    p.stdin = None  # closed: communicate reads the rest
    out, err = p.communicate(timeout=120)
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    check(p.returncode == 0 and "truncated" not in err and out == want,
          "SIGINT ignored at the start, then sent: the whole recording (exit %d): %s\n%s" %
          (p.returncode, err.strip(), out[:300]))
    print("ok: an ignored SIGINT leaves the copy whole")


def test_file_named_dash(t, dat):
    with open(t.path("-"), "wb") as f:
        f.truncate(100 << 20)
    err = t.path("viewer.err")
    t.start("cat %s | %s -f - 2> %s" % (shlex.quote(dat), shlex.quote(t.memtop),
                                         shlex.quote(err)))
    t.wait_for(lambda s: "REPLAY" in header_line(s, 0), "the viewer on the piped recording")
    t.keys("q")
    rc = t.wait_dead()
    text = open(err).read()
    check(rc == 0 and "reading" not in text,
          "a file named '-' is not the piped recording (exit %d): %r" % (rc, text))
    os.unlink(t.path("-"))
    print("ok: no 'reading -' for a file named '-'")


def test(t):
    dat = t.path(t.record_demo(SECONDS))
    data = open(dat, "rb").read()
    p = subprocess.run([t.memtop, "-f", "-", "--batch"], env=t.env, cwd=t.workdir, input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "cat F | memtop -f - --batch exited %d" % p.returncode)
    test_not_a_recording(t)
    test_sigint_ignored(t, data, p.stdout.decode(errors="replace"))
    test_file_named_dash(t, dat)


tuilib.main(test, __doc__)
