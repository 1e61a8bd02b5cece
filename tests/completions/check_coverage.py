#!/usr/bin/env python3
"""check_coverage.py -- every option of cli_options.c is completed and documented.

Why it exists: an option added to src/tui/base/cli_options.c must also be
added to the bash, zsh and fish completions and to memtop(1).  The options
are read from the source (long_opts[] and the getopt string); each must
appear, with the right "takes an argument" shape, in:
  - completions/memtop.bash: the opts list, and _memtop_takes_arg for those
    with an argument (else `memtop --opt VALUE PROG` would complete wrongly);
  - completions/_memtop: an _arguments spec, `-x+`/`--long=` iff it takes an
    argument;
  - completions/memtop.fish: a `complete -c memtop` line with -s/-l, and -x or
    -r iff it takes an argument;
  - docs/man/memtop.1: a tag in the rendered OPTIONS section, followed by an
    argument name iff it takes one.
"""

import os
import re
import subprocess

import compl_lib as lib


def read(path):
    with open(path) as f:
        return f.read()


def token(text, word, after=r"(?![\w-])"):
    return re.search(r"(?<![\w-])" + re.escape(word) + after, text) is not None


def check_bash(c, opts, text):
    m = re.search(r'local opts="([^"]*)"', text)
    if not c.check(m, "memtop.bash: no `local opts=\"...\"` list"):
        return
    listed = set(m.group(1).split())
    takes = re.search(r"_memtop_takes_arg\(\)\s*\{(.*?)\n\}", text, re.S)
    c.check(takes, "memtop.bash: no _memtop_takes_arg function")
    takes = takes.group(1) if takes else ""
    cluster = re.search(r"\^-\[(\w+)\]\*\[(\w+)\]\$", takes)
    c.check(cluster, "memtop.bash: no short-option cluster pattern in _memtop_takes_arg")
    flags, with_arg = cluster.groups() if cluster else ("", "")
    for o in opts:
        for w in o.words():
            c.check(w in listed, f"memtop.bash: {w} is not in the opts list")
        if o.long:
            c.equal(token(takes, "--" + o.long), o.has_arg,
                    f"memtop.bash: --{o.long} in _memtop_takes_arg")
        if o.short:
            c.check(o.short in (with_arg if o.has_arg else flags),
                    f"memtop.bash: -{o.short} in the cluster pattern "
                    f"[{flags}]*[{with_arg}] as {'taking' if o.has_arg else 'no'} argument")


def check_zsh(c, opts, text):
    for o in opts:
        if o.short:
            arg = token(text, "-" + o.short + "+", r"")
            plain = token(text, "-" + o.short, r"(?![\w+=-])")
            c.check(arg if o.has_arg else plain and not arg,
                    f"_memtop: -{o.short}{'+' if o.has_arg else ''} spec")
        if o.long:
            arg = token(text, "--" + o.long + "=", r"")
            plain = token(text, "--" + o.long, r"(?![\w+=-])")
            c.check(arg if o.has_arg else plain and not arg,
                    f"_memtop: --{o.long}{'=' if o.has_arg else ''} spec")


def check_fish(c, opts, text):
    lines = [l for l in text.splitlines() if l.startswith("complete -c memtop")]
    for o in opts:
        key = f"-l {o.long}" if o.long else f"-s {o.short}"
        found = [l for l in lines if token(l, key)]
        if not c.check(len(found) == 1, f"memtop.fish: one `complete` line with {key}"):
            continue
        line = found[0]
        if o.short:
            c.check(token(line, f"-s {o.short}"), f"memtop.fish: -s {o.short} on the {key} line")
        needs = token(line, "-x") or token(line, "-r")
        c.equal(needs, o.has_arg, f"memtop.fish: {key} requires an argument (-x/-r)")


def rendered_options(man_path):
    env = dict(os.environ, MANWIDTH="100", LC_ALL="C", MAN_KEEP_FORMATTING="")
    out = subprocess.run(["man", "-l", man_path], env=env, capture_output=True, text=True,
                         check=True).stdout
    out = re.sub(r".\x08", "", out)  # overstriking, if any
    m = re.search(r"^OPTIONS\n(.*?)^\S", out, re.S | re.M)
    return m.group(1) if m else ""


def check_man(c, opts, man_path):
    section = rendered_options(man_path)
    c.check(section, "memtop.1: no OPTIONS section")
    tags = {}
    for line in section.splitlines():
        m = re.match(r"^ {7}(-[\w-]+(?:, -[\w-]+)?)( [A-Z][A-Z.]*)?(?:\s{2,}.*)?$", line)
        if m:
            for w in m.group(1).split(", "):
                tags[w] = bool(m.group(2))
    for o in opts:
        for w in o.words():
            if c.check(w in tags, f"memtop.1: {w} has no tag in OPTIONS"):
                c.equal(tags[w], o.has_arg, f"memtop.1: {w} tag shows an argument")


def main():
    args = lib.common_args(__doc__).parse_args()
    src = args.source_dir
    opts = lib.parse_options(src)
    print("options:", " ".join(map(repr, opts)))
    c = lib.Checker("coverage")
    check_bash(c, opts, read(os.path.join(src, "completions/memtop.bash")))
    check_zsh(c, opts, read(os.path.join(src, "completions/_memtop")))
    check_fish(c, opts, read(os.path.join(src, "completions/memtop.fish")))
    check_man(c, opts, os.path.join(src, "docs/man/memtop.1"))
    c.done()


if __name__ == "__main__":
    main()
