#!/usr/bin/env python3
"""check_keys_man.py -- the viewer's key table and the man page name the same keys.

Why it exists: the key dispatch, the function bar and the help page (`?`) of
memtop's viewer are made from one table (src/tui/screen/keymap.c).  A key
added there must be documented in docs/man/memtop.1 (INTERACTIVE COMMANDS),
and a key documented there must exist.  keymap_dump prints the table; the man
page's keys are the bold names of each .TP entry of that section.  The help's
key column ("Up/Down, j/k", written by hand in the table) must name exactly
the keys the table binds, too.  Exit 0 when all agree, 1 with what differs.
"""
import argparse
import re
import subprocess
import sys


def man_keys(path):
    """The keys of the .TP headers of INTERACTIVE COMMANDS."""
    text = open(path).read()
    m = re.search(r"^\.SH INTERACTIVE COMMANDS\n(.*?)^\.SH ", text, re.M | re.S)
    if not m:
        sys.exit(f"{path}: no INTERACTIVE COMMANDS section")
    keys = set()
    lines = m.group(1).split("\n")
    for i, line in enumerate(lines[:-1]):
        if line != ".TP":
            continue
        head = re.match(r"^\.BR? (.*)$", lines[i + 1])
        if not head:
            sys.exit(f"{path}: a .TP of INTERACTIVE COMMANDS without a .B/.BR key: {lines[i + 1]}")
        words = head.group(1).replace('", "', " ").replace('"', " ")
        keys.update(w.replace("\\-", "-") for w in words.split())
    return keys


def shown_keys(shown):
    """The keys a help key column names: ", " and " " separate, "/" joins two."""
    keys = set()
    for word in re.split(r"[, ]+", shown.strip()):
        keys.update(word.split("/") if len(word) > 1 and "/" in word else [word])
    return keys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True, help="the keymap_dump program")
    ap.add_argument("--man", required=True, help="docs/man/memtop.1")
    args = ap.parse_args()
    out = subprocess.run([args.dump], check=True, capture_output=True, text=True).stdout
    table, shown = set(), set()
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "key":
            table.add(rest)
        else:
            shown |= shown_keys(rest)
    man = man_keys(args.man)
    errors = [f"key {k} is in the key table but not in the man page" for k in sorted(table - man)]
    errors += [f"key {k} is in the man page but not in the key table" for k in sorted(man - table)]
    errors += [f"key {k} is bound but the help does not show it" for k in sorted(table - shown)]
    errors += [f"the help shows {k}, which nothing binds" for k in sorted(shown - table)]
    for e in errors:
        print(e)
    print(f"{len(table)} keys in the table, {len(man)} in the man page, {len(errors)} difference(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
