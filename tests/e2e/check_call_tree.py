#!/usr/bin/env python3
"""check_call_tree.py -- the call tree export, checked to the byte both ways.

Why it exists: `--export FILE.tree.json` (issue 18) must put every byte on
the call path that allocated it.  Runs memtop-call-paths (known paths: two
subsystems sharing a helper, direct and indirect recursion, an inlined
helper; see tests/workloads/call_paths.c) and checks, for every node of
those paths, inclusive and own live bytes and blocks, top-down and bottom-up
(--reverse); that recursion counts each block once per node; that the roots
sum to the flat JSON export's totals; that --threshold folds small nodes
into "(other)"; that `--batch --tree` prints the same tree as text; and that
a recording of the run prints it too (`-f FILE --batch --tree`).
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

# (path below main, inclusive bytes, own bytes, inclusive blocks), top-down
TOP_DOWN = [
    ("", 11852, 0, 15),
    ("net_serve", 3000, 0, 3),
    ("net_serve/shared_helper", 3000, 3000, 3),
    ("db_query", 3500, 0, 5),
    ("db_query/shared_helper", 3500, 3500, 5),
    ("recurse", 666, 666, 2),  # recurse -> recurse -> recurse: one node
    ("ping", 4242, 0, 1),
    ("ping/pong", 4242, 0, 1),
    ("ping/pong/ping", 4242, 4242, 1),  # indirect recursion: a node again
    ("inline_user", 444, 0, 4),
    ("inline_user/fill_buf", 444, 444, 4),
]
# the same from the allocation sites up (roots: the sites)
BOTTOM_UP = [
    ("shared_helper", 6500, 6500, 8),
    ("shared_helper/net_serve", 3000, 0, 3),
    ("shared_helper/net_serve/main", 3000, 0, 3),
    ("shared_helper/db_query", 3500, 0, 5),
    ("shared_helper/db_query/main", 3500, 0, 5),
    ("recurse", 666, 666, 2),
    ("recurse/main", 666, 0, 2),
    ("ping", 4242, 4242, 1),
    ("ping/pong/ping/main", 4242, 0, 1),
    ("fill_buf", 444, 444, 4),
    ("fill_buf/inline_user/main", 444, 0, 4),
]
WORKLOAD_BYTES = 11852


def export(ctx, args, name, *opts):
    out = ctx.path(name)
    cmd = [args.memtop, "--export", out, *opts, "--", args.call_paths]
    proc = e2elib.run(cmd, ctx.env_with(MEMTOP_TEMP_MS=0))
    check(proc.returncode == 0, "%s exited %s\n%s" %
          (e2elib.show_cmd(cmd), proc.returncode, e2elib.describe(proc)))
    return e2elib.load_json(out)


def child(nodes, name, where):
    found = [n for n in nodes if n["name"] == name]
    check(len(found) == 1, "%s: %d nodes named %r among %s" %
          (where, len(found), name, [n["name"] for n in nodes]))
    return found[0]


def find_main(nodes):
    """The node "main" (top-down it lies below _start and libc's frames)."""
    for n in nodes:
        if n["name"] == "main":
            return n
        m = find_main(n["children"])
        if m:
            return m
    return None


def check_nodes(start, expected, where, reverse=False):
    for path, incl, own, blocks in expected:
        node = start
        for name in filter(None, path.split("/")):
            node = child(node["children"] if "children" in node else node, name,
                         "%s %s" % (where, path))
        got = (node["live_bytes"], node["own"]["live_bytes"], node["live_count"])
        check(got == (incl, own, blocks), "%s node %r: inclusive/own bytes, blocks %s, expected %s"
              % (where, path or "main", got, (incl, own, blocks)))
        # top-down a node's bytes are its own plus its callees'; bottom-up
        # its callers' (own is the site's, at the root), until main
        kids = sum(c["live_bytes"] for c in node["children"])
        rest = 0 if reverse else node["own"]["live_bytes"]
        check(kids + rest == node["live_bytes"] or (reverse and path.endswith("main")),
              "%s node %r: children %d and own %d do not add up to %d" %
              (where, path, kids, rest, node["live_bytes"]))


def check_totals(tree, flat, where):
    total = flat["totals"]["live_bytes"]
    roots = sum(r["live_bytes"] for r in tree["roots"])
    check(tree["totals"]["live_bytes"] == total == roots,
          "%s: tree totals %d, roots %d, flat export %d" %
          (where, tree["totals"]["live_bytes"], roots, total))
    check(sum(r["live_count"] for r in tree["roots"]) == flat["totals"]["live_count"],
          "%s: root blocks differ from the flat export's" % where)


def tree_rows(text):
    """(LIVE, OWN, BLOCKS, indented name) of the last tree printed in text
    (GROWTH and LEAK left out: a replay computes its own)."""
    blocks = text.split("CALL TREE (")
    check(len(blocks) > 1, "no tree header:\n" + text)
    rows = []
    for ln in blocks[-1].splitlines()[1:]:  # "%10s %10s %9s %12s %5.1f  NAME" (export_tree.c)
        if not ln.strip():
            break
        rows.append((ln[0:10].strip(), ln[11:21].strip(), ln[22:31].strip(), ln[52:]))
    return rows


def check_recording(ctx, args):
    """`-f FILE --batch --tree` prints the recording's tree at its end, the
    rows the live `--batch --tree` printed at the exit; --reverse turns it."""
    rec = ctx.path("paths.dat")
    cmd = [args.memtop, "--record", rec, "--batch", "--tree", "-n", "1", "--", args.call_paths]
    live = e2elib.run(cmd, ctx.env_with(MEMTOP_TEMP_MS=0))
    check(live.returncode == 0, e2elib.describe(live))
    cmd = [args.memtop, "-f", rec, "--batch", "--tree"]
    replay = e2elib.run(cmd, ctx.env)
    check(replay.returncode == 0 and "leaked)" in replay.stdout, e2elib.describe(replay))
    want, got = tree_rows(live.stdout), tree_rows(replay.stdout)
    check(len(want) >= len(TOP_DOWN) and got == want, "-f --batch --tree printed\n%s\nthe live run\n%s" %
          ("\n".join(map(str, got)), "\n".join(map(str, want))))
    up = e2elib.run(cmd + ["--reverse"], ctx.env)
    check(up.returncode == 0 and "CALL TREE (bottom-up" in up.stdout and
          tree_rows(up.stdout)[0][3] == "shared_helper", e2elib.describe(up))
    print("ok: -f FILE --batch --tree prints the recording's tree (%d rows)" % len(got))


def test(args):
    ctx = e2elib.Ctx(args)
    flat = export(ctx, args, "flat.json")
    down = export(ctx, args, "down.tree.json")
    check(down["direction"] == "top-down", "direction %r" % down["direction"])
    main = find_main(down["roots"])
    check(main is not None, "no node main in the top-down tree")
    check_nodes(main, TOP_DOWN, "top-down")
    check(child(main["children"], "inline_user", "")["children"][0]["inlined"],
          "fill_buf is not marked inlined")
    check_totals(down, flat, "top-down")
    print("ok: top-down tree, %d nodes checked" % len(TOP_DOWN))

    up = export(ctx, args, "up.tree.json", "--reverse")
    check(up["direction"] == "bottom-up", "direction %r" % up["direction"])
    check_nodes({"children": up["roots"]}, BOTTOM_UP, "bottom-up", reverse=True)
    check_totals(up, flat, "bottom-up")
    print("ok: bottom-up tree, %d nodes checked" % len(BOTTOM_UP))

    cut = export(ctx, args, "cut.tree.json", "--threshold", "1000")
    kids = find_main(cut["roots"])["children"]
    names = sorted(c["name"] for c in kids)
    check(names == ["(other)", "db_query", "net_serve", "ping"], "threshold 1000: %s" % names)
    other = child(kids, "(other)", "threshold")
    check(other["other"] and other["live_bytes"] == 666 + 444 and kids[-1] is other,
          "(other) holds %d bytes (expected 1110, sorted last)" % other["live_bytes"])
    print("ok: --threshold folds recurse and inline_user into (other)")

    cmd = [args.memtop, "--batch", "--tree", "-n", "1", "--", args.call_paths]
    proc = e2elib.run(cmd, ctx.env)
    check(proc.returncode == 0, e2elib.describe(proc))
    lines = proc.stdout.splitlines()
    check(any("CALL TREE (top-down" in ln for ln in lines), "no tree header:\n" + proc.stdout)
    check(any(ln.rstrip().endswith("fill_buf [inlined]") for ln in lines),
          "no inlined fill_buf line:\n" + proc.stdout)
    check(any(ln.rstrip().endswith("    shared_helper") for ln in lines),
          "no indented shared_helper line:\n" + proc.stdout)
    print("ok: --batch --tree prints the tree")
    check_recording(ctx, args)
    check(not ctx.segments(), "segments left behind: %s" % ctx.segments())


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
