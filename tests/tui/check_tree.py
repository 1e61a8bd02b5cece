"""check_tree.py -- `t`: the call tree view, opened, closed, sorted and reversed.

Runs memtop-call-paths (tests/workloads/call_paths.c: main calls ping,
db_query, net_serve, recurse and inline_user, with known bytes and blocks;
its final state stays on screen) and asserts: `t` shows the top-down tree
with the one-child chain from _start open down to a closed "+ main" (at
80x24 too, its names whole: figure columns give way); End and
Right open main, whose children come sorted by live bytes (ping 4242 B,
db_query 3500, net_serve 3000, recurse 666, inline_user 444) with fill_buf
marked [inlined] below inline_user; N sorts them by live blocks (db_query 5,
inline_user 4, net_serve 3, recurse 2, ping 1); the filter (/fill_buf,
a trace's location) leaves inline_user alone below main and Esc brings
the rest back; /db_query (on a path, no trace's location) leaves
db_query alone; g says it groups the table, not the tree; Left closes
main again; I
turns the tree bottom-up (shared_helper, the shared allocation site, first
with 6.3 KiB); e there writes FILE.tree.json, bottom-up, its roots those
on screen; t goes back to the table.
Then on a recording of it (MEMTOP_RECORD), `memtop -f FILE --tree` opens on
the tree at the end (main, 11.6 KiB); `<` (the time cursor to the start)
leaves no node; `>` (the end) brings main back.
"""
import os
import re
import subprocess

import tuilib
from tuilib import check

BY_LIVE = ["ping", "db_query", "net_serve", "recurse", "inline_user"]
BY_BLOCKS = ["db_query", "inline_user", "net_serve", "recurse", "ping"]
LINE_RE = re.compile(r"^\s*[\d.]+ (?:B|KiB)\s.*?\d+\s{2}( *)([-+ ]) (\S+)( \[inlined\])?\s*$")


def tree_lines(screen):
    """[(depth, mark, name, inlined)] of the tree's lines on screen."""
    lines = screen.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if "CALL TREE" in ln) + 1
    except StopIteration:
        return []
    out = []
    for ln in lines[start:]:
        m = LINE_RE.match(ln)
        if not m:
            break
        out.append((len(m.group(1)) // 2, m.group(2), m.group(3), bool(m.group(4))))
    return out


def children_of_main(screen):
    lines = tree_lines(screen)
    at = [i for i, ln in enumerate(lines) if ln[2] == "main"]
    if not at:
        return None
    depth = lines[at[0]][0]
    return [ln[2] for ln in lines[at[0] + 1:] if ln[0] == depth + 1]


def test(t):
    t.start([t.memtop, "--", t.args.call_paths], width=120, height=30)
    t.wait_for(lambda s: tuilib.row_for(tuilib.parse_table(s)[1], "shared_helper"),
               "the table with symbolized rows (shared_helper)")
    t.keys("t")
    s = t.wait_for(lambda s: any(ln[2] == "main" and ln[1] == "+" for ln in tree_lines(s)),
                   "the top-down tree with a closed main")
    check("CALL TREE top-down" in s, "no top-down heading:\n" + tuilib.frame(s))
    check(children_of_main(s) == [], "main's children shown while closed:\n" + tuilib.frame(s))
    check(tree_lines(s)[0][2] == "_start", "the tree does not start at _start:\n" +
          tuilib.frame(s))
    check_narrow(t)

    t.keys("End", "Right")
    s = t.wait_for(lambda s: children_of_main(s) == BY_LIVE, "main opened, sorted by live bytes")
    inl = [ln for ln in tree_lines(s) if ln[2] == "fill_buf"]
    check(inl and inl[0][3], "fill_buf is not shown as [inlined]:\n" + tuilib.frame(s))

    t.keys("N")
    t.wait_for(lambda s: children_of_main(s) == BY_BLOCKS, "main's children sorted by blocks")

    filter_tree(t, "fill_buf", ["inline_user"], "the location of one trace")
    # db_query is no trace's location (shared_helper is): the tree's filter
    # matches the names on the paths too.
    filter_tree(t, "db_query", ["db_query"], "a caller, on the path of one trace")

    t.keys("Left")
    t.wait_for(lambda s: children_of_main(s) == [], "main closed again by Left")

    # g groups the table, not the tree: the status line says so, the tree stays.
    t.keys("g")
    s = t.wait_for("the call tree is not grouped", "g in the tree: 'the call tree is not grouped'")
    check("one row per function" in s and any(ln[2] == "main" for ln in tree_lines(s)),
          "g in the tree view: no 'one row per function' or the tree is gone:\n" +
          tuilib.frame(s))
    for _ in range(3):  # back to one row per trace
        t.keys("g")

    t.keys("I")
    s = t.wait_for(lambda s: "CALL TREE bottom-up" in s and tree_lines(s) and
                   tree_lines(s)[0][2] == "shared_helper", "the bottom-up tree")
    check("6.3 KiB" in s.split("\n")[[i for i, ln in enumerate(s.split("\n"))
                                        if "shared_helper" in ln][0]],
          "shared_helper does not hold 6.3 KiB bottom-up:\n" + tuilib.frame(s))
    check_export(t, s)

    t.keys("t")
    t.wait_rows(lambda rows, s: "LOCATION" in (tuilib.parse_table(s)[0] or ""),
                "the table again after t")

    check_replay(t)


def check_narrow(t):
    """At 80x24 the least needed figure columns give way: the names of the
    chain from _start to main (glibc's __libc_start_call_main, 22 letters
    at depth 2) are whole, LIVE and OWN still shown.  Every column left 13
    for the names ("- __libc_s…")."""
    t.resize(80, 24)
    s = t.wait_for(lambda s: t.size() == (80, 24) and
                   any(ln[2] == "main" for ln in tree_lines(s)), "the tree at 80x24")
    names = [ln[2] for ln in tree_lines(s)]
    head = next(ln for ln in s.split("\n") if "CALL TREE" in ln)
    check("\u2026" not in "".join(names) and "main" in names and "_start" in names and
          "LIVE" in head and "OWN" in head,
          "the tree's names are cut at 80 columns:\n%s" % tuilib.frame(s))
    t.resize(120, 30)
    t.wait_for(lambda s: t.size() == (120, 30) and "TEMP%" in s, "the tree at 120x30")


def filter_tree(t, text, children, what):
    """/TEXT leaves CHILDREN below main; Esc brings them all back."""
    t.keys("/")
    t.keys_literal(text)
    t.keys("Enter")
    t.wait_for(lambda s: children_of_main(s) == children,
               "the filter (/%s, %s): main's children %r" % (text, what, children))
    t.keys("Escape")
    t.wait_for(lambda s: children_of_main(s) == BY_BLOCKS, "Esc: the filter cleared")


def check_export(t, s):
    """e in the tree view writes the tree on screen: FILE.tree.json, bottom-up,
    its roots in the order of the screen's top-level nodes."""
    path, tree = t.export_key(set())
    check(path.endswith(".tree.json"), "e in the tree view wrote %s, not a .tree.json" % path)
    check(tree.get("memtop_tree") == 1 and tree.get("direction") == "bottom-up",
          "the export is not the bottom-up tree: memtop_tree %r, direction %r" %
          (tree.get("memtop_tree"), tree.get("direction")))
    shown = [ln[2] for ln in tree_lines(s) if ln[0] == 0]
    roots = [r["name"] for r in tree["roots"]][:len(shown)]
    check(roots == shown, "the export's roots %r are not the screen's %r" % (roots, shown))
    print("e in the tree view: %s, roots %s" % (os.path.basename(path), roots))


def record(t):
    env = dict(t.env, LD_PRELOAD=os.path.abspath(t.args.preload),
               MEMTOP_RECORD=t.path("paths-%p.dat"))
    p = subprocess.run([t.args.call_paths], env=env, cwd=t.workdir, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0, "the recorded workload exited %d: %s" % (p.returncode, p.stderr))
    files = [f for f in os.listdir(t.workdir) if re.fullmatch(r"paths-\d+\.dat", f)]
    check(len(files) == 1, "expected one paths-PID.dat in %s, found %s" % (t.workdir, files))
    return t.path(files[0])


def main_line(screen):
    lines = screen.split("\n")
    return next((ln for ln in lines if re.search(r"[-+] main\s*$", ln)), None)


def check_replay(t):
    dat = record(t)
    t.start([t.memtop, "-f", dat, "--tree"], width=120, height=30)
    s = t.wait_for(lambda s: main_line(s) and "11.6 KiB" in main_line(s),
                   "the recording's tree at its end (main, 11.6 KiB)")
    check("CALL TREE top-down" in s, "-f --tree did not open on the tree:\n" + tuilib.frame(s))
    t.keys("<")
    t.wait_for(lambda s: "CALL TREE" in s and not tree_lines(s),
               "no node at the start of the recording (<)")
    t.keys(">")
    t.wait_for(lambda s: main_line(s) and "11.6 KiB" in main_line(s),
               "main again at the end of the recording (>)")


tuilib.main(test, __doc__)
