#!/usr/bin/env python3
"""check_zsh.py -- the zsh completion: syntax, and completion run for real.

Why it exists: `zsh -n` catches syntax errors; zsh_complete.zsh then runs
the real completion system in a pseudo-terminal (compinit with _memtop first
in $fpath, a typed line and TAB) and reports every match added.  This checks
sort keys and groupings (read from cli_options.c), attachable pids with their
command as description (a live preloaded process is offered, stale segments
are not), option names, .dat files for -f, and PROG after `--` delegated to
its own completion.  Skipped (77) when zsh is not installed.
"""

import os
import shutil
import subprocess

import compl_lib as lib

HERE = os.path.dirname(os.path.abspath(__file__))


class Zsh:
    def __init__(self, fpath_dir, env, cwd, home):
        self.fpath_dir, self.cwd = fpath_dir, cwd
        self.env = dict(env, HOME=home, ZDOTDIR=home)
        self.out = os.path.join(home, "matches")

    def complete_pairs(self, line):
        """[(match, description)] zsh adds for `line` + TAB; None if it did not finish."""
        r = subprocess.run(["zsh", "-f", os.path.join(HERE, "zsh_complete.zsh"),
                            self.fpath_dir, self.out, line], env=self.env, cwd=self.cwd,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print(f"zsh did not finish completing {line!r}: {r.stderr.strip()}")
            return None
        with open(self.out) as f:
            lines = [l for l in f.read().split("\n") if l and l != "#done"]
        return [tuple((l.split("\t", 1) + [""])[:2]) for l in lines]

    def complete(self, line):
        pairs = self.complete_pairs(line)
        return None if pairs is None else [m for m, _ in pairs]


def check_values(c, sh, src):
    keys, groups = sorted(lib.sort_keys(src)), sorted(lib.groupings(src))
    for opt in ("-s ", "--sort="):
        c.equal(sorted(sh.complete("memtop " + opt) or []), keys, f"memtop {opt}<TAB>")
    c.equal(sh.complete("memtop -s te"), ["temporary"], "memtop -s te<TAB>")
    c.equal(sorted(sh.complete("memtop -g ") or []), groups, "memtop -g <TAB>")
    c.equal(sh.complete("memtop --ex"), ["--export"], "memtop --ex<TAB>")


def check_pids(c, sh, seg):
    pairs = dict(sh.complete_pairs("memtop -p ") or [])
    live = str(seg.live_pid)
    if c.check(live in pairs, f"memtop -p <TAB> offers the live pid {live}: {pairs}"):
        c.check(pairs[live].endswith("sleep"),
                f"the live pid's description is its command: {pairs[live]!r}")
    for pid in seg.dead_pids:
        c.check(str(pid) not in pairs, f"memtop -p <TAB> leaves out dead pid {pid}")
    c.check(all(p.isdigit() and not p.startswith("0") for p in pairs),
            f"memtop -p <TAB> offers only pids: {list(pairs)}")


def check_files_and_prog(c, sh, cwd):
    for name in ("a.dat", "b.json"):
        open(os.path.join(cwd, name), "w").close()
    os.makedirs(os.path.join(cwd, "sub"), exist_ok=True)
    c.equal(sorted(sh.complete("memtop -f ") or []), ["a.dat", "sub"],
            "memtop -f <TAB> (.dat files and directories)")
    got = sh.complete("memtop --export ") or []
    c.check({"a.dat", "b.json", "sub"} <= set(got), f"memtop --export <TAB> offers files: {got}")
    c.check("sleep" in (sh.complete("memtop -- slee") or []), "memtop -- slee<TAB> offers sleep")
    c.check("sleep" in (sh.complete("memtop -p 1 slee") or []),
            "memtop -p 1 slee<TAB> offers sleep")
    got = sh.complete("memtop -- ls --colo") or []
    c.check("--color" in got, f"memtop -- ls --colo<TAB> delegates to ls: {got}")
    got = sh.complete("memtop -b sleep --") or []
    c.check("--pid" not in got, f"memtop -b sleep --<TAB> is PROG's: {got[:5]}")


def main():
    args = lib.common_args(__doc__).parse_args()
    if not shutil.which("zsh"):
        print("zsh is not installed: skipped (scripts/install-deps.sh installs it)")
        return lib.SKIP
    src = os.path.join(args.source_dir, "completions/_memtop")
    c = lib.Checker("zsh completion")
    r = subprocess.run(["zsh", "-n", src], capture_output=True, text=True)
    c.check(r.returncode == 0 and not r.stderr, f"zsh -n _memtop: {r.stderr.strip()}")

    base = lib.workdir(args.workdir)
    home, cwd, fdir = (os.path.join(base, d) for d in ("home", "cwd", "fpath"))
    for d in (home, cwd, fdir):
        os.makedirs(d)
    shutil.copy(src, fdir)  # only _memtop: the folder also holds other shells' files
    seg = lib.Segments(args.preload, base)
    try:
        sh = Zsh(fdir, seg.env(), cwd, home)
        check_values(c, sh, args.source_dir)
        check_pids(c, sh, seg)
        check_files_and_prog(c, sh, cwd)
    finally:
        seg.close()
    c.done()


if __name__ == "__main__":
    raise SystemExit(main())
