#!/usr/bin/env python3
"""check_man.py -- memtop(1) renders without warnings and is complete.

Why it exists: a man page with a roff mistake renders wrongly without any
error, so this runs `groff -man -ww -z` and `man --warnings -l` (in the C
and a UTF-8 locale) and fails on any warning.  It also checks that the page
has the sections users expect, that man-db can read its NAME line (whatis,
apropos), and that every MEMTOP_* variable named in `memtop --help`
(src/tui/cli/cli_usage.c) and the README, plus MEMTOP_RECORD, is described
under ENVIRONMENT.  (The options are checked by check_coverage.py.)
"""

import os
import re
import subprocess

import compl_lib as lib

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "INTERACTIVE COMMANDS", "COLUMNS",
            "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"]


def run(cmd, **env):
    return subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True,
                          timeout=60)


def env_vars(source_dir):
    names = set()
    for rel in ("src/tui/cli/cli_usage.c", "README.md"):
        with open(os.path.join(source_dir, rel)) as f:
            names |= set(re.findall(r"\bMEMTOP_[A-Z_]*[A-Z]\b", f.read()))
    return names | {"MEMTOP_RECORD"}


def section(text, name):
    m = re.search(r"^" + re.escape(name) + r"\n(.*?)(?=^\S|\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


def main():
    args = lib.common_args(__doc__).parse_args()
    page = os.path.join(args.source_dir, "docs/man/memtop.1")
    c = lib.Checker("man page")

    r = run(["groff", "-man", "-ww", "-z", page])
    c.check(r.returncode == 0 and not r.stderr, f"groff -man -ww -z: rc {r.returncode}: {r.stderr}")
    text = ""
    for locale in ("C", "C.UTF-8"):
        r = run(["man", "--warnings", "-l", page], LC_ALL=locale, MANWIDTH="80", MANPAGER="cat",
                PAGER="cat", MAN_KEEP_FORMATTING="")
        c.check(r.returncode == 0 and not r.stderr,
                f"man --warnings -l (LC_ALL={locale}): rc {r.returncode}: {r.stderr}")
        if locale == "C":
            text = re.sub(r".\x08", "", r.stdout)
    widest = max((len(l) for l in text.splitlines()), default=0)
    c.check(widest <= 80, f"the page fits 80 columns (widest line: {widest})")

    for name in SECTIONS:
        c.check(section(text, name).strip(), f"section {name} is present and not empty")
    r = run(["lexgrog", page])
    c.check(r.returncode == 0 and "memtop - " in r.stdout, f"lexgrog reads NAME: {r.stdout}")

    environment = section(text, "ENVIRONMENT")
    for var in sorted(env_vars(args.source_dir)):
        c.check(re.search(r"^ {7}" + var + r"\b", environment, re.M),
                f"ENVIRONMENT describes {var}")
    see_also = section(text, "SEE ALSO")
    for ref in ("heaptrack(1)", "valgrind(1)"):
        c.check(ref in see_also, f"SEE ALSO names {ref}")
    c.done()


if __name__ == "__main__":
    main()
