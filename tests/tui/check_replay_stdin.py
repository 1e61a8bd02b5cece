"""check_replay_stdin.py -- `memtop -f -`: a recording read from standard
input (src/ipc/dat_stdin.h).  Fails without it (memtop takes "-" for a
file name: "cannot open: No such file or directory").

memtop-demo runs 2 s with MEMTOP_RECORD=demo-%p.dat.  Asserts:
  - `cat demo-PID.dat | memtop -f - --batch` prints what `memtop -f
    demo-PID.dat --batch` prints, the recording named "standard input";
    `--export` from a pipe equals the file's export; `< demo-PID.dat` (a
    regular file) and a non-blocking pipe written slowly work;
  - a stream cut short (the first 60 %) opens with the "truncated" warning
    and exit 0; nothing on standard input: exit 1, one line;
  - TMPDIR on a full disk (root: a 4 KiB tmpfs): exit 1, one line saying
    so;
  - in a terminal: `memtop -f -` with the terminal as standard input: exit
    1, one line saying so, the alternate screen never taken; `cat
    demo-PID.dat | memtop -f -`: the viewer opens (REPLAY header) and reads its keys
    from the terminal (q exits 0);
  - a writer that ignores Ctrl-C and goes on sending: the first Ctrl-C
    waits for what still comes, the second opens what arrived (exit 0);
  - the natural use: `memtop -p PID --record - | memtop -f -` in a
    terminal: while the stream comes, standard error counts its bytes;
    Ctrl-C stops both, the recorder finalizes and the viewer opens on the
    whole recording (no "truncated"); q exits 0;
  - nothing is left in TMPDIR (the copy is an unlinked file)."""
import os
import re
import shlex
import subprocess
import time

import tuilib
from tuilib import check, frame, header_line

SECONDS = 2


def memtop_stdin(t, argv, data):
    p = subprocess.run([t.memtop] + argv, env=t.env, cwd=t.workdir, input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def test_pipes(t, dat):
    data = open(dat, "rb").read()
    rc, want, err = t.run_memtop(["-f", dat, "--batch"])
    check(rc == 0, "memtop -f FILE --batch exited %d: %s" % (rc, err.strip()))
    rc, got, err = memtop_stdin(t, ["-f", "-", "--batch"], data)
    check(rc == 0 and err == "", "cat F | memtop -f - --batch exited %d: %s" % (rc, err.strip()))
    check(got.startswith("recording: standard input ("),
          "the recording is named standard input:\n" + got[:300])
    strip = lambda s: re.sub(r"^recording: [^(]*\(", "recording: (", s, count=1)
    check(strip(got) == strip(want), "the same report as from the file:\n%s\n---\n%s" %
          (got[:600], want[:600]))

    rc, _, err = t.run_memtop(["-f", dat, "--export", t.path("file.json")])
    check(rc == 0, "memtop -f FILE --export exited %d: %s" % (rc, err.strip()))
    rc, _, err = memtop_stdin(t, ["-f", "-", "--export", t.path("pipe.json")], data)
    check(rc == 0, "memtop -f - --export exited %d: %s" % (rc, err.strip()))
    a, b = (tuilib.e2elib.load_json(t.path(n)) for n in ("file.json", "pipe.json"))
    check(a["totals"] == b["totals"] and len(a["traces"]) == len(b["traces"]),
          "the export from a pipe equals the file's")

    with open(dat, "rb") as f:
        p = subprocess.run([t.memtop, "-f", "-", "--batch"], env=t.env, stdin=f,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0 and p.stdout.decode() == got,
          "memtop -f - < F (a regular file) exited %d: %s" % (p.returncode, p.stderr.decode()))

    # a pipe in non-blocking mode (as some shells and tools leave it), written slowly
    r, w = os.pipe()
    os.set_blocking(r, False)
    p = subprocess.Popen([t.memtop, "-f", "-", "--batch"], env=t.env, stdin=r,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(r)
    try:
        for part in (data[:1000], data[1000:]):
            time.sleep(0.3)
            os.write(w, part)
    except BrokenPipeError:
        pass  # memtop gave up: its status and message say why
    os.close(w)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 0 and out.decode() == got,
          "a non-blocking pipe exited %d: %s" % (p.returncode, err.decode().strip()))

    rc, out, err = memtop_stdin(t, ["-f", "-", "--batch"], data[:len(data) * 6 // 10])
    check(rc == 0 and "standard input: truncated" in err and "recording: standard input" in out,
          "a stream cut short opens up to its last frame (exit %d): %s" % (rc, err.strip()))
    rc, out, err = memtop_stdin(t, ["-f", "-", "--batch"], b"")
    check(rc == 1 and out == "" and err.count("\n") == 1 and
          err.startswith("memtop: standard input: not a memtop recording: nothing arrived"),
          "nothing on standard input: exit 1 (%d), one line: %r" % (rc, err))


def test_full_tmpdir(t):
    """TMPDIR on a full disk (a 4 KiB tmpfs in a private mount namespace,
    root): one line saying so, exit 1 (skipped where that cannot be made)."""
    full = t.path("full")
    os.mkdir(full)
    # a recording's magic first: anything else is refused before it is copied
    inner = ('mount -t tmpfs -o size=4k memtop-full "$0" || exit 77; '
             '{ printf "MTREC\\r\\n\\032"; head -c 65536 /dev/zero; } | '
             'TMPDIR="$0" "$1" -f - --batch')
    p = subprocess.run(["unshare", "-m", "sh", "-c", inner, full, t.memtop], env=t.env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    if os.geteuid() != 0 or p.returncode == 77 or "unshare" in p.stderr:
        print("skipped: no small tmpfs here (root, a mount namespace): %s" % p.stderr.strip())
        return
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and
          "copying it to %s: No space left on device" % full in p.stderr,
          "a full TMPDIR: exit 1 (%d), one line: %r" % (p.returncode, p.stderr))


def test_terminal(t, dat):
    t.start_shell(width=250)
    prompts = t.screen().count(tuilib.PROMPT)
    t.run_in_shell("%s -f -; echo rc=$?" % shlex.quote(t.memtop))
    s = t.wait_for(lambda s: re.search(r"^rc=\d+$", s, re.M) and
                   s.count(tuilib.PROMPT) > prompts, "memtop -f - to end")
    lines = s.split("\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith("rc="))
    check(lines[i] == "rc=1" and not t.alternate_on() and
          lines[i - 1].startswith("memtop: standard input: a terminal, not a recording") and
          tuilib.PROMPT in lines[i - 2],
          "-f - on a terminal: exit 1 and one line:\n" + frame(s))

    t.start("cat %s | %s -f -" % (shlex.quote(dat), shlex.quote(t.memtop)))
    t.wait_for(lambda s: "REPLAY" in header_line(s, 0), "the viewer on the piped recording")
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "q exits 0 (%d): the keys come from the terminal" % rc)


def test_endless_writer(t, dat):
    """A writer that ignores Ctrl-C and goes on sending: the first Ctrl-C
    waits for what still comes, the second ends the copy."""
    out = t.path("endless.txt")
    writer = "(trap '' INT; cat %s; while :; do printf x; sleep 0.1; done)" % shlex.quote(dat)
    t.start("trap : INT; %s | %s -f - --batch > %s" % (writer, shlex.quote(t.memtop),
                                                        shlex.quote(out)), width=120)
    t.wait_for(re.compile(r"reading a recording from standard input: [1-9]").search,
               "the bytes so far on standard error")
    t.keys("C-c")
    time.sleep(1.5)
    check(t.exit_status() is None, "one Ctrl-C: still reading what comes")
    t.keys("C-c")
    rc = t.wait_dead()
    text = open(out).read()
    check(rc == 0 and text.startswith("recording: standard input"),
          "the second Ctrl-C opens what arrived (exit %d):\n%s\n%s" %
          (rc, text[:300], frame(t.screen())))


def test_live_stream(t):
    demo = t.start_preloaded_demo(60)
    # The shell catches Ctrl-C (a handler, reset in its children) to write the status.
    t.start("trap : INT; %s -p %d --record - | %s -f -" % (shlex.quote(t.memtop), demo.pid,
                                                  shlex.quote(t.memtop)), width=120)
    t.wait_for(re.compile(r"reading a recording from standard input: [1-9][0-9.]* [KM]iB").search,
               "the bytes so far on standard error")
    t.keys("C-c")
    s = t.wait_for(lambda s: "REPLAY" in header_line(s, 0), "the viewer after Ctrl-C")
    check("truncated" not in header_line(s, 0) and "not finalized" not in header_line(s, 0),
          "the recorder finalized its stream before the viewer opened it:\n" + frame(s))
    t.keys("q")
    rc = t.wait_dead()
    check(rc == 0, "q exits 0 (%d)" % rc)


def test(t):
    dat = t.path(t.record_demo(SECONDS))
    test_pipes(t, dat)
    test_full_tmpdir(t)
    test_terminal(t, dat)
    test_endless_writer(t, dat)
    test_live_stream(t)
    check(os.listdir(t.tmp_dir) == [], "nothing left in TMPDIR: %s" % os.listdir(t.tmp_dir))


tuilib.main(test, __doc__)
