#!/usr/bin/env python3
"""check_bash.py -- the bash completion, run for real in bash.

Why it exists: the completion is code; this sources completions/memtop.bash
in a bash process, sets COMP_WORDS/COMP_CWORD/COMP_LINE/COMP_POINT as bash
does on TAB, calls _memtop and reads COMPREPLY.  It checks sort keys and
groupings (read from cli_options.c), attachable pids (a live preloaded
process is offered, stale segments and non-segment files are not, and the
pids agree with `memtop --list`), option names, files, and where PROG starts
for every option (an option taking a value swallows the next word).  Once
standalone, and the PROG delegation again with bash-completion loaded when it
is installed.
"""

import os
import shlex
import subprocess

import compl_lib as lib

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


class Bash:
    def __init__(self, script, env, cwd, with_bash_completion=False):
        self.script, self.env, self.cwd = script, env, cwd
        self.pre = f"source {shlex.quote(BASH_COMPLETION)}\n" if with_bash_completion else ""

    def complete(self, *words):
        """COMPREPLY for `words`, the last one being the word under the cursor."""
        line = " ".join(words)
        prog = self.pre + f"""
source {shlex.quote(self.script)}
compopt() {{ :; }}  # builtin compopt only works during a real completion
COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE={shlex.quote(line)}
COMP_POINT={len(line)}
COMPREPLY=()
_memtop
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], env=self.env,
                           cwd=self.cwd, capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or r.stderr:
            print(f"bash stderr for {words!r}: {r.stderr.strip()}")
        return [l for l in r.stdout.split("\n") if l]


def listed_pids(memtop, env):
    """Pids that `memtop --list` shows as running."""
    out = subprocess.run([memtop, "--list"], env=env, capture_output=True, text=True,
                         timeout=60).stdout
    pids = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit() and f[1] == "running":
            pids.add(f[0])
    return pids


def check_values(c, sh, src):
    keys, groups = lib.sort_keys(src), lib.groupings(src)
    for opt in ("-s", "--sort", "-bs"):
        c.equal(sh.complete("memtop", opt, ""), keys, f"memtop {opt} <TAB>")
    c.equal(sh.complete("memtop", "--sort", "=", ""), keys, "memtop --sort=<TAB> (split at =)")
    c.equal(sh.complete("memtop", "--sort=l"), ["--sort=" + k for k in keys if k[0] == "l"],
            "memtop --sort=l<TAB> (one word)")
    c.equal(sh.complete("memtop", "-s", "te"), ["temporary"], "memtop -s te<TAB>")
    for opt in ("-g", "--group"):
        c.equal(sh.complete("memtop", opt, ""), groups, f"memtop {opt} <TAB>")
    c.equal(sh.complete("memtop", "--ex"), ["--export"], "memtop --ex<TAB>")
    c.equal(sh.complete("memtop", "--no-"), ["--no-symbols", "--no-color"], "memtop --no-<TAB>")


def check_pids(c, sh, seg, memtop):
    got = sh.complete("memtop", "-p", "")
    live = str(seg.live_pid)
    c.check(live in got, f"memtop -p <TAB> offers the live pid {live}: {got}")
    for pid in seg.dead_pids:
        c.check(str(pid) not in got, f"memtop -p <TAB> leaves out dead pid {pid}: {got}")
    c.check(all(p.isdigit() and not p.startswith("0") for p in got),
            f"memtop -p <TAB> offers only pids: {got}")
    c.equal(sh.complete("memtop", "--pid", "=", ""), got, "memtop --pid=<TAB>")
    c.equal(sh.complete("memtop", "-p", live[:-1]),
            sorted(p for p in got if p.startswith(live[:-1])), "memtop -p <prefix><TAB>")
    if memtop:
        c.equal(set(got), listed_pids(memtop, seg.env()), "-p <TAB> pids = running in --list")


def check_files(c, sh, cwd):
    for name in ("a.dat", "b.json", "notes.txt"):
        open(os.path.join(cwd, name), "w").close()
    os.makedirs(os.path.join(cwd, "sub"), exist_ok=True)
    all_files = {"a.dat", "b.json", "notes.txt", "sub", "shm"}
    for opt in ("-e", "--export", "--output", "--record"):
        c.equal(set(sh.complete("memtop", opt, "")), all_files, f"memtop {opt} <TAB>")
    for opt in ("-f", "--file"):
        c.equal(set(sh.complete("memtop", opt, "")), {"a.dat", "sub", "shm"},
                f"memtop {opt} <TAB> (.dat files and directories)")
    c.equal(sh.complete("memtop", "--export", "b"), ["b.json"], "memtop --export b<TAB>")


def check_prog(c, sh, opts):
    """After every option (and its value), the next word is PROG: commands."""
    c.check("sleep" in sh.complete("memtop", "--", "slee"), "memtop -- slee<TAB> offers sleep")
    c.check("sleep" in sh.complete("memtop", "slee"), "memtop slee<TAB> offers sleep")
    got = sh.complete("memtop", "-p", "1", "sleep", "--")
    c.check("--pid" not in got, f"memtop -p 1 sleep --<TAB> is PROG's, not memtop's: {got[:5]}")
    got = sh.complete("memtop", "-p", "1", "--")
    c.check("--pid" in got, f"memtop -p 1 --<TAB> offers memtop's options: {got[:5]}")
    for o in opts:
        for w in o.words():
            words = ["memtop", w, "5"] if o.has_arg else ["memtop", w]
            got = sh.complete(*words, "slee")
            c.check("sleep" in got, f"{' '.join(words)} slee<TAB> completes PROG: {got[:5]}")
            if o.has_arg:
                got = sh.complete("memtop", w, "slee")
                c.check("sleep" not in got, f"memtop {w} slee<TAB> is {w}'s value: {got[:5]}")
    c.check("sleep" not in sh.complete("memtop", "-s", "slee"), "-s's value is no command")


def check_delegation(c, script, env, cwd, keys):
    if not os.path.exists(BASH_COMPLETION):
        print(f"bash-completion not installed ({BASH_COMPLETION}): delegation not checked")
        return
    sh = Bash(script, env, cwd, with_bash_completion=True)
    got = sh.complete("memtop", "--", "ls", "--colo")
    c.check("--color" in got, f"memtop -- ls --colo<TAB> delegates to ls: {got}")
    got = sh.complete("memtop", "-b", "ls", "--colo")
    c.check("--color" in got, f"memtop -b ls --colo<TAB> delegates to ls: {got}")
    c.equal(sh.complete("memtop", "-s", ""), keys, "memtop -s <TAB> with bash-completion")
    c.equal(set(sh.complete("memtop", "-f", "")), {"a.dat", "sub", "shm"},
            "memtop -f <TAB> with bash-completion (_filedir)")
    reg = subprocess.run(["bash", "--norc", "-c", f"source {shlex.quote(script)}; complete -p memtop"],
                         capture_output=True, text=True).stdout.strip()
    c.equal(reg, "complete -F _memtop memtop", "the file registers _memtop for memtop")


def main():
    args = lib.common_args(__doc__).parse_args()
    script = os.path.join(args.source_dir, "completions/memtop.bash")
    base = lib.workdir(args.workdir)
    seg = lib.Segments(args.preload, base)
    c = lib.Checker("bash completion")
    try:
        sh = Bash(script, seg.env(), base)
        check_values(c, sh, args.source_dir)
        check_pids(c, sh, seg, args.memtop)
        check_files(c, sh, base)
        check_prog(c, sh, lib.parse_options(args.source_dir))
        check_delegation(c, script, seg.env(), base, lib.sort_keys(args.source_dir))
    finally:
        seg.close()
    c.done()


if __name__ == "__main__":
    main()
