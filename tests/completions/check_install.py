#!/usr/bin/env python3
"""check_install.py -- `cmake --install` puts the man page and completions in place.

Why it exists: completions and man pages only help when they land where
man, bash-completion, zsh and fish look.  This installs the build tree into
a temporary prefix and checks:
  - DATADIR/bash-completion/completions/memtop, DATADIR/zsh/vendor-completions/_memtop,
    DATADIR/fish/vendor_completions.d/memtop.fish and MANDIR/man1/memtop.1 exist and
    equal their sources;
  - `man -w memtop` finds the page through MANPATH=<prefix>/MANDIR;
  - bash-completion loads the completion on demand from XDG_DATA_DIRS (when
    bash-completion is installed), and fish does too (when fish is installed).
"""

import filecmp
import os
import shutil
import subprocess

import compl_lib as lib

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


def main():
    p = lib.common_args(__doc__)
    p.add_argument("--cmake", required=True)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--datadir", required=True, help="CMAKE_INSTALL_DATADIR")
    p.add_argument("--mandir", required=True, help="CMAKE_INSTALL_MANDIR")
    args = p.parse_args()
    prefix = os.path.join(lib.workdir(args.workdir), "prefix")
    c = lib.Checker("install")

    r = subprocess.run([args.cmake, "--install", args.build_dir, "--prefix", prefix],
                       capture_output=True, text=True, timeout=300)
    if not c.check(r.returncode == 0, f"cmake --install: {r.stdout[-2000:]}{r.stderr}"):
        c.done()
    data, man = os.path.join(prefix, args.datadir), os.path.join(prefix, args.mandir)
    src = args.source_dir
    expected = {
        os.path.join(data, "bash-completion/completions/memtop"): "completions/memtop.bash",
        os.path.join(data, "zsh/vendor-completions/_memtop"): "completions/_memtop",
        os.path.join(data, "fish/vendor_completions.d/memtop.fish"): "completions/memtop.fish",
        os.path.join(man, "man1/memtop.1"): "docs/man/memtop.1",
    }
    for installed, source in expected.items():
        if c.check(os.path.isfile(installed), f"installed {installed}"):
            c.check(filecmp.cmp(installed, os.path.join(src, source), shallow=False),
                    f"{installed} equals {source}")

    r = subprocess.run(["man", "-w", "memtop"], env=dict(os.environ, MANPATH=man),
                       capture_output=True, text=True)
    c.equal(r.stdout.strip(), os.path.join(man, "man1/memtop.1"), "man -w memtop with MANPATH")

    env = dict(os.environ, XDG_DATA_DIRS=data)
    if os.path.exists(BASH_COMPLETION):
        script = (f"source {BASH_COMPLETION}; __load_completion memtop; complete -p memtop")
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env,
                           capture_output=True, text=True, timeout=60)
        c.equal(r.stdout.strip(), "complete -F _memtop memtop",
                "bash-completion loads memtop's completion from XDG_DATA_DIRS")
    else:
        print("bash-completion is not installed: on-demand loading not checked")
    if shutil.which("fish"):
        home = os.path.join(prefix, "..", "home")
        os.makedirs(home, exist_ok=True)
        # fish loads completions only for commands it finds: the installed memtop.
        path = os.path.join(prefix, "bin") + os.pathsep + os.environ.get("PATH", "")
        fenv = dict(env, HOME=home, XDG_CONFIG_HOME=home, XDG_CACHE_HOME=home, PATH=path)
        r = subprocess.run(["fish", "-c", 'complete -C "memtop --sort=le"'], env=fenv,
                           capture_output=True, text=True, timeout=60)
        c.check(r.stdout.startswith("--sort=leak"),
                f"fish loads memtop.fish from XDG_DATA_DIRS: {r.stdout!r} {r.stderr!r}")
    else:
        print("fish is not installed: on-demand loading not checked")
    c.done()


if __name__ == "__main__":
    main()
