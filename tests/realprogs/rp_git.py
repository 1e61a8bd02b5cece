#!/usr/bin/env python3
"""Real program: git init/add/commit/log/diff/gc in a fresh repository (a
shell script running a dozen git processes, all preloaded): same output
(commit ids included) and exit code, no segment left by any process, the
script's shell tracked, and `memtop --export -- git log` gives a tracked
snapshot of git itself with git's usual output."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rplib import Test, check_tracked, need, script  # noqa: E402

sh, git = need("sh", "git")
t = Test("git")
repo = t.path("repo")
snap = t.run_all([sh, script("git_repo.sh"), repo], 0, timeout=120)
check_tracked(t, snap, "sh running git")
if t.have_lib:
    log = [git, "-C", repo, "log", "--format=%H %s", "--stat"]
    env = {"HOME": repo, "GIT_CONFIG_NOSYSTEM": "1"}
    plain = t.run_plain(log, env=env)
    res, snap = t.run_snapshot(log, t.shm_dir("shm-log"), env)
    t.expect(res, 0, plain.out)
    check_tracked(t, t.check_snapshot(snap, res.label), "git log")
t.finish()
