#!/usr/bin/env python3
"""check_layers.py -- src/tui's folders use only the layers below them.

Why it exists: src/tui is one static library per folder, in the order that
src/tui/CMakeLists.txt sets in MEMTOP_TUI_LAYERS (lowest first).  A file may
include a header of its own folder or of a folder before it, never of one
after it: that is what keeps the libraries free of cycles.  The order is read
from the CMake file, so there is one list to change.

Every `#include "x.h"` of every .c/.h under src/tui is resolved to the folder
of src/tui that holds x.h (headers of src/ipc, src/symbolize and the system
are not checked), and each folder's library may link only the libraries of
the folders before it.  A header name held by two folders is an error too: the
include would depend on the include path's order.  Exit 0 when all is well,
1 with one line per offending include.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layers(tui):
    with open(os.path.join(tui, "CMakeLists.txt")) as f:
        m = re.search(r"set\(MEMTOP_TUI_LAYERS\s+([^)]*)\)", f.read())
    if not m:
        sys.exit("cannot find set(MEMTOP_TUI_LAYERS ...) in src/tui/CMakeLists.txt")
    return m.group(1).split()


def sources(tui, folder):
    d = os.path.join(tui, folder)
    return sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")))


def link_errors(tui, order, rank):
    """Each folder's library (memtop_tui_layer or add_library in its
    CMakeLists.txt) links only the libraries of folders before it."""
    lib, links = {}, {}
    for folder in order:
        path = os.path.join(tui, folder, "CMakeLists.txt")
        text = open(path).read() if os.path.exists(path) else ""
        m = re.search(r"(?:add_library|memtop_tui_layer)\((\w+)", text)
        if m:
            lib[m.group(1)] = folder
        calls = re.findall(r"(?:target_link_libraries|memtop_tui_layer)\(([^)]*)\)", text)
        links[folder] = " ".join(calls).split()
    errors = []
    for folder in order:
        for name in links[folder]:
            to = lib.get(name)
            if to is not None and rank[to] >= rank[folder] and to != folder:
                errors.append(f"src/tui/{folder}/CMakeLists.txt links {name} of {to}/, "
                              f"a higher layer than {folder}/")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    tui = os.path.join(ap.parse_args().source_dir, "src", "tui")
    order = layers(tui)
    folders = sorted(e for e in os.listdir(tui) if os.path.isdir(os.path.join(tui, e)))
    errors = [f"src/tui/{d}/ is not in MEMTOP_TUI_LAYERS" for d in folders if d not in order]
    rank = {name: i for i, name in enumerate(order)}
    home = {}
    for folder in order:
        for f in (h for h in sources(tui, folder) if h.endswith(".h")):
            if f in home:
                errors.append(f"{f} is in both src/tui/{home[f]}/ and src/tui/{folder}/")
            home.setdefault(f, folder)
    for folder in order:
        for f in sources(tui, folder):
            with open(os.path.join(tui, folder, f)) as src:
                text = src.read()
            for m in INCLUDE.finditer(text):
                to = home.get(os.path.basename(m.group(1)))
                if to is not None and rank[to] > rank[folder]:
                    line = text.count("\n", 0, m.start()) + 1
                    errors.append(f"src/tui/{folder}/{f}:{line}: includes {m.group(1)} of "
                                  f"{to}/, a higher layer than {folder}/")
    errors += link_errors(tui, order, rank)
    for e in errors:
        print(e)
    print(f"{len(errors)} layer violation(s); order: {' < '.join(order)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
