"""check_record_culled.py -- `R` starts a culled recording of the target and
stops it; the file opens with `memtop -f FILE --batch`, which says it is
culled.

`memtop --cull=0.5 -- memtop-demo 60` (the demo's churn dies young, its cache
and leak outlive half a second).  Asserts:
  - before `R` the header's recording row says "Rec off";
  - after `R` the header shows "● REC <path> <size>" and says "culled <0.500 s",
    and the status line (above the F-key bar) says "culled recording:
    <path>"; the file is memtop-PID-YYYYmmdd-HHMMSS.dat in memtop's working
    directory, mode 0600;
  - `R` again stops it: the status line says "recording stopped:" and the
    header says "recorded <path> (<size>)" (the target still runs);
  - `memtop -f FILE --batch` exits 0 and prints "culled recording:" (the
    summary, with blocks culled: the demo's churn) and a "data:" line that
    names the culled recording (never a bare "exact"): at the end of the file,
    "exact at the end of this culled recording (...)";
  - at a cursor before the end (`--at 1`), its "data:" line says "NOT exact:
    culled recording: ..." as the JSON export's health.not_exact does.
  - q: memtop exits.
"""
import re
import time

import tuilib
from tuilib import check, frame, header_line

WIDTH = 200  # the recording row holds a long path


def status_line(screen):
    """The line above the F-key bar: the status line (else the table's footer)."""
    lines = [line for line in screen.split("\n") if line.strip()]
    return lines[-2] if len(lines) > 1 else ""


def test(t):
    t.start([t.memtop, "--cull=0.5", "--", t.demo, "60"], width=WIDTH)
    shown, dat = t.record_key("R")
    screen = t.wait_for(lambda s: "recording: " in status_line(s),
                        "the status line '... recording: ...' after R")
    check("culled <0.500 s" in header_line(screen, 3),
          "the header's recording row does not say 'culled <0.500 s':\n" + frame(screen))
    check("culled recording: %s" % shown in status_line(screen),
          "the status line does not say 'culled recording: %s':\n%s" % (shown, frame(screen)))

    time.sleep(3)  # the demo's churn, culled for a few seconds (not a timing assertion)
    t.keys("R")
    screen = t.wait_for(lambda s: "recording stopped: " in status_line(s),
                        "the status line 'recording stopped: ...' after the second R")
    t.wait_for(lambda s: "recorded %s (" % shown in header_line(s, 3) and
               "RUNNING" in header_line(s, 0), "'recorded <path>', the target still RUNNING")

    rc, out, err = t.run_memtop(["-f", dat, "--batch"])
    check(rc == 0, "memtop -f %s --batch exited %d: %s" % (dat, rc, err.strip()))
    m = re.search(r"^culled recording: (\d+) blocks freed within 0.500 s", out, re.M)
    check(m, "the batch report has no 'culled recording: N blocks freed within 0.500 s' "
          "line:\n" + out)
    check(int(m.group(1)) > 0, "no block was culled: " + m.group(0))
    data = re.search(r"^data: (.*)$", out, re.M)
    check(data, "the batch report has no 'data:' line:\n" + out)
    check("culled recording" in data.group(1),
          "the data line does not say the recording is culled: %r" % data.group(0))
    check(data.group(1) != "exact", "the data line says a bare 'exact' over a culled recording")
    print(m.group(0))
    print(data.group(0))

    json_path = t.path("at1.json")
    rc, _, err = t.run_memtop(["-f", dat, "--export", json_path, "--at", "1"])
    check(rc == 0, "memtop -f --export --at 1 exited %d: %s" % (rc, err.strip()))
    not_exact = tuilib.e2elib.load_json(json_path)["health"]["not_exact"]
    rc, out, err = t.run_memtop(["-f", dat, "--batch", "--at", "1"])
    check(rc == 0, "memtop -f --batch --at 1 exited %d: %s" % (rc, err.strip()))
    data = re.search(r"^data: (.*)$", out, re.M)
    check(data and not_exact and "culled recording" in not_exact and data.group(1) == not_exact,
          "at 1 s the data line %r differs from the JSON's health.not_exact %r" %
          (data and data.group(0), not_exact))
    print("at 1 s: " + data.group(0))

    t.keys("q")
    t.wait_dead()


tuilib.main(test, __doc__)
