#!/usr/bin/env python3
"""The own unwinder agrees with libunwind on real programs: python3 (threads,
a subprocess, PYTHONMALLOC=malloc, and a deep C recursion in the json
encoder with MEMTOP_DEPTH=128, so traces are truncated), perl, git (--version, log with
stats, a dozen git processes building a repository), sqlite3, make -n (a
main program whose load segments have a gap: glibc reports only the segment
holding an address, its unwind table is in another, and the own walker
must still find it), and memtop's
own workloads: memtop-exact (threads, -O0 frame-pointer code; also with
MEMTOP_DEPTH=1), memtop-demo,
pf_cxx (C++: exceptions on 4 threads, forced unwinding) and pf_tls (2000
short-lived threads, a dlopen'ed module).  Each runs with
MEMTOP_UNWIND=check: every allocation is unwound both ways; the test wants
zero mismatches, summaries from every run, and the own walker used.

Every allocation unwound twice is slow on a loaded machine, so the runs come
in three groups, one ctest test each (argv[1]): python (the three python3
runs), own (memtop's workloads), tools (perl, git, sqlite3, make)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test, check_agree, env_path, need, run_check  # noqa: E402

GROUPS = ("python", "own", "tools")
group = sys.argv[1] if len(sys.argv) == 2 else ""
if group not in GROUPS:
    sys.exit("usage: unw_check_programs.py %s" % "|".join(GROUPS))
t = Test("unwind_check_programs_" + group)
scripts = env_path("UNW_SCRIPTS")
repo = env_path("UNW_REPO")
py = os.path.realpath(sys.executable)

python_runs = [
    ("python3", [py, "-S", os.path.join(scripts, "alloc_threads.py")], 3, {}, None),
    ("python3-malloc", [py, "-S", "-c", "import json; d = [json.dumps({'k': i}) "
                        "for i in range(10000)]; print(len(d))"], 0,
     {"PYTHONMALLOC": "malloc"}, None),
    ("python3-deep-depth128", [py, "-S", "-c", "import json\nx = []\nfor i in range(400): "
                               "x = [x, str(i)]\nprint(len(json.dumps(x)))"], 0,
     {"PYTHONMALLOC": "malloc", "MEMTOP_DEPTH": "128"}, None),
]
own_runs = [
    ("exact", [env_path("UNW_EXACT"), "-"], 0, {}, None),
    ("exact-depth1", [env_path("UNW_EXACT"), "-"], 0, {"MEMTOP_DEPTH": "1"}, None),
    ("demo", [env_path("UNW_DEMO"), "1"], 0, {}, None),
    ("cxx", [env_path("UNW_CXX")], 0, {}, None),
    ("tls", [env_path("UNW_TLS")], 0, {}, None),
]
runs = []  # the tools group
perl, git, sqlite3, sh = need("perl"), need("git"), need("sqlite3"), need("sh")
make = need("make")
if perl:
    runs.append(("perl", [perl, os.path.join(scripts, "hashes.pl")], 0, {}, None))
if git:
    gitenv = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": t.work, "GIT_PAGER": "cat"}
    runs.append(("git-version", [git, "--version"], 0, gitenv, None))  # ~90 allocations
    runs.append(("git-log", [git, "-C", repo, "log", "-n", "200", "--stat", "--format=%H %s"],
                 0, gitenv, None))
    if sh:
        runs.append(("git-repo", [sh, os.path.join(scripts, "git_repo.sh"), t.path("repo")], 0,
                     gitenv, None))
if sqlite3:
    # rp_sqlite's workload with a tenth of its rows: still thousands of
    # allocations, each unwound twice, in far less time on a loaded machine.
    sql = open(os.path.join(scripts, "queries.sql")).read()
    t.check("x < 100000" in sql, "queries.sql no longer builds its 100000 rows with 'x < 100000'")
    sql = sql.replace("x < 100000", "x < 10000")
    runs.append(("sqlite3", [sqlite3, "-batch", ":memory:"], 0, {}, sql))
if make:
    mk = t.path("Makefile")
    with open(mk, "w") as f:
        f.write("OBJS := $(patsubst %,obj%.o,$(shell seq 1 300))\n"
                "all: prog\n"
                "prog: $(OBJS)\n\t@echo link $(words $^) objects\n"
                "obj%.o:\n\t@echo cc $(subst .o,.c,$@) -o $@\n")
    runs.append(("make-n", [make, "-n", "-f", mk, "-C", t.work], 0, {}, None))
if group == "tools":
    for prog in ("perl", "git", "sqlite3", "make"):
        if not need(prog):
            t.log("%s not installed: its runs are skipped" % prog)
runs = {"python": python_runs, "own": own_runs, "tools": runs}[group]

for tag, cmd, rc, env, stdin in runs:
    s = run_check(t, cmd, tag, rc=rc, env=env, input=stdin, timeout=180)
    # make's own frames must be walked by the own walker: a few fallbacks
    # (signal frames, startup code) at most, not one per allocation.
    check_agree(t, s, tag, min_own=20 if tag == "git-version" else 100,
                max_fallback=s.own // 20 if s is not None and tag == "make-n" else None)
t.finish()
