#!/usr/bin/env python3
"""check_fish.py -- the fish completion, run for real in fish.

Why it exists: `fish -c 'source completions/memtop.fish; complete -C LINE'`
prints exactly what fish offers on TAB.  This checks sort keys and
groupings (read from cli_options.c), attachable pids with their command as
description (a live preloaded process is offered, stale segments are not),
option names, .dat files for -f, and where PROG starts for every option.
Skipped (77) when fish is not installed.
"""

import os
import shutil
import subprocess

import compl_lib as lib


class Fish:
    def __init__(self, script, env, cwd, home):
        self.script, self.cwd = script, cwd
        # A private config and data home: no user config, no universal variables.
        self.env = dict(env, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
                        XDG_DATA_HOME=os.path.join(home, "data"),
                        XDG_CACHE_HOME=os.path.join(home, "cache"))

    def complete_pairs(self, line):
        """[(candidate, description)] fish offers for `line`."""
        r = subprocess.run(["fish", "-c", 'source $argv[1]; complete -C $argv[2]', self.script,
                            line], env=self.env, cwd=self.cwd, capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0 or r.stderr:
            print(f"fish stderr for {line!r}: {r.stderr.strip()}")
        return [tuple((l.split("\t", 1) + [""])[:2]) for l in r.stdout.split("\n") if l]

    def complete(self, line):
        return [c for c, _ in self.complete_pairs(line)]


def check_values(c, sh, src):
    keys, groups = sorted(lib.sort_keys(src)), sorted(lib.groupings(src))
    for opt in ("-s ", "--sort ", "-bs "):
        c.equal(sorted(sh.complete("memtop " + opt)), keys, f"memtop {opt}<TAB>")
    c.equal(sh.complete("memtop --sort=te"), ["--sort=temporary"], "memtop --sort=te<TAB>")
    for opt in ("-g ", "--group "):
        c.equal(sorted(sh.complete("memtop " + opt)), groups, f"memtop {opt}<TAB>")
    c.equal(sh.complete("memtop --ex"), ["--export"], "memtop --ex<TAB>")
    c.equal(sorted(sh.complete("memtop --no-")), ["--no-color", "--no-symbols"],
            "memtop --no-<TAB>")


def check_pids(c, sh, seg):
    pairs = dict(sh.complete_pairs("memtop -p "))
    live = str(seg.live_pid)
    if c.check(live in pairs, f"memtop -p <TAB> offers the live pid {live}: {pairs}"):
        c.equal(pairs[live], "sleep", "the live pid's description is its command")
    for pid in seg.dead_pids:
        c.check(str(pid) not in pairs, f"memtop -p <TAB> leaves out dead pid {pid}")
    c.check(all(p.isdigit() and not p.startswith("0") for p in pairs),
            f"memtop -p <TAB> offers only pids: {list(pairs)}")
    c.equal(sorted(sh.complete("memtop --pid ")), sorted(pairs), "memtop --pid <TAB>")


def check_files(c, sh, cwd):
    for name in ("a.dat", "b.json"):
        open(os.path.join(cwd, name), "w").close()
    os.makedirs(os.path.join(cwd, "sub"), exist_ok=True)
    for opt in ("-f ", "--file "):
        c.equal(sorted(sh.complete("memtop " + opt)), ["a.dat", "sub/"],
                f"memtop {opt}<TAB> (.dat files and directories)")
    for opt in ("-e ", "--export ", "--output ", "--record "):
        got = sh.complete("memtop " + opt)
        c.check({"a.dat", "b.json", "sub/"} <= set(got), f"memtop {opt}<TAB> offers files: {got}")


def check_prog(c, sh, opts):
    c.check("sleep" in sh.complete("memtop -- slee"), "memtop -- slee<TAB> offers sleep")
    c.check("sleep" in sh.complete("memtop slee"), "memtop slee<TAB> offers sleep")
    got = sh.complete("memtop -p 1 sleep --")
    c.check("--pid" not in got, f"memtop -p 1 sleep --<TAB> is PROG's: {got[:5]}")
    c.check("--pid" in sh.complete("memtop -p 1 --"), "memtop -p 1 --<TAB> offers --pid")
    for o in opts:
        for w in o.words():
            before = f"memtop {w} 5 " if o.has_arg else f"memtop {w} "
            got = sh.complete(before + "slee")
            c.check("sleep" in got, f"{before}slee<TAB> completes PROG: {got[:5]}")
            if o.has_arg:
                got = sh.complete(f"memtop {w} slee")
                c.check("sleep" not in got, f"memtop {w} slee<TAB> is {w}'s value: {got[:5]}")
    got = sh.complete("memtop -- ls --colo")
    c.check("--color" in got, f"memtop -- ls --colo<TAB> delegates to ls: {got}")


def main():
    args = lib.common_args(__doc__).parse_args()
    if not shutil.which("fish"):
        print("fish is not installed: skipped (scripts/install-deps.sh installs it)")
        return lib.SKIP
    script = os.path.join(args.source_dir, "completions/memtop.fish")
    base = lib.workdir(args.workdir)
    home, cwd = os.path.join(base, "home"), os.path.join(base, "cwd")
    os.makedirs(home)
    os.makedirs(cwd)
    seg = lib.Segments(args.preload, base)
    c = lib.Checker("fish completion")
    try:
        sh = Fish(script, seg.env(), cwd, home)
        check_values(c, sh, args.source_dir)
        check_pids(c, sh, seg)
        check_files(c, sh, cwd)
        check_prog(c, sh, lib.parse_options(args.source_dir))
    finally:
        seg.close()
    c.done()


if __name__ == "__main__":
    raise SystemExit(main())
