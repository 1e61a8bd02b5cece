"""check_export_locale.py -- exports are valid under a comma-decimal locale.

The viewer runs under the user's locale (setlocale(LC_ALL, "")), where
de_DE writes 34,000 for 34.000; JSON, CSV and metrics want a '.'.

Asserts: with LC_ALL=de_DE.UTF-8 (built with localedef into the work
directory) the viewer does use the locale (its sizes read "1,5 KiB"); `e`
writes a file json.load reads, whose floats (growth_window_s,
snapshot_age_s, every growth_bytes_per_s) are numbers; in the call tree `e`
writes a .tree.json that loads too; `memtop --export x.csv` under the same
locale gives a growth column every field of which is a '.' decimal.  SKIP
(77) when localedef is missing or cannot build de_DE.UTF-8.
"""
import csv
import os
import re
import shutil
import subprocess
import sys

import tuilib
from tuilib import e2elib
from tuilib import check

SKIP = 77  # ctest SKIP_RETURN_CODE


def build_locale(t):
    """LOCPATH holding de_DE.UTF-8, or None (printed why)."""
    if not shutil.which("localedef"):
        print("SKIP: localedef is not installed (it builds the de_DE.UTF-8 locale)")
        return None
    loc = t.path("locales")
    os.makedirs(loc, exist_ok=True)
    p = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8",
                        os.path.join(loc, "de_DE.UTF-8")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not os.path.isdir(os.path.join(loc, "de_DE.UTF-8")):
        print("SKIP: localedef could not build de_DE.UTF-8 (%d): %s"
              % (p.returncode, p.stdout.decode(errors="replace").strip()))
        return None
    return loc


def check_floats(snap, path):
    for key in ("growth_window_s", "snapshot_age_s"):
        check(isinstance(snap.get(key), (int, float)),
              "%s: %s is %r, not a number" % (path, key, snap.get(key)))
    for tr in snap["traces"]:
        g = tr.get("growth_bytes_per_s")
        check(isinstance(g, (int, float)), "%s: growth_bytes_per_s %r" % (path, g))


def check_csv(t, loc, pid):
    out = t.path("x.csv")
    env = dict(t.env, LOCPATH=loc, LC_ALL="de_DE.UTF-8")
    p = subprocess.run([t.memtop, "--export", out, "-p", str(pid)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0, "memtop --export x.csv failed: %s" % p.stderr.decode())
    with open(out) as f:
        rows = list(csv.reader(f))
    col = rows[0].index("growth_bytes_per_s")
    for r in rows[1:]:
        check(re.fullmatch(r"-?\d+\.\d{3}", r[col]), "CSV growth field %r in %r" % (r[col], r))
    print("CSV: %d rows, growth e.g. %s" % (len(rows) - 1, rows[1][col]))


def test(t):
    loc = build_locale(t)
    if not loc:
        sys.exit(SKIP)
    t.start([t.memtop, "--", t.demo, "60"], LOCPATH=loc, LC_ALL="de_DE.UTF-8")
    # (wait_symbolized parses sizes with a '.')
    t.wait_for(lambda s: "session_log_append" in s and re.search(r"\d,\d (?:KiB|MiB)", s),
               "the demo's rows and a size with a decimal comma (the viewer under de_DE)")
    pid = int(re.search(r"memtop pid (\d+)", t.screen()).group(1))
    taken = set()
    path, snap = t.export_key(taken)
    check_floats(snap, path)
    print("growth_window_s %r in %s" % (snap["growth_window_s"], path))
    t.keys("t")
    t.wait_for(lambda s: "CALL TREE" in s or "Call tree" in s, "the call tree")
    shown = t.export_status("e", ".tree.json", taken, tuilib.json_complete)
    e2elib.load_json(os.path.join(t.workdir, shown))
    check_csv(t, loc, pid)


tuilib.main(test, __doc__)
