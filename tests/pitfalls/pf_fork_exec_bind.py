#!/usr/bin/env python3
"""A shell's fork children exec at once: memtop's execve interposer must
find the next execve without a symbol lookup of its own in each child
(hook_exec.h mt_exec_prebind: the parent's publisher thread looks it up
once the parent has lived MEMTOP_START_MS, before it creates the segment,
and the children inherit the slot), and ending the child's publisher thread before
the exec must not bind pthread_timedjoin_np lazily in each child either
(publish_thread.c calls it through a pointer bound at load), and starting
the child's publisher thread must not bind glibc's _dl_allocate_tls_init
(publish_thread.c gives the thread a stack of its own: glibc's cached
stack took a path the parent never took).  A lookup in a fork child walks
symbol tables whose pages the child has not mapped yet
(docs/performance.md, "Process start and exit").  Seen through the
dynamic loader's LD_DEBUG=bindings: the children's lines (another pid than
the file's) must bind nothing at all (plain bash's children bind
nothing)."""
import glob
import os
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("fork_exec_bind")
# The shell waits (builtins only: no fork) until its segment exists, then
# runs three fork + exec children; the builtin at the end keeps bash from
# exec'ing the last command itself.
script = ('n=0; while [ -n "$MEMTOP_SHM_DIR" ] && [ ! -e "$MEMTOP_SHM_DIR/memtop-$$" ] '
          '&& [ $n -lt 3000000 ]; do n=$((n+1)); done; '
          '[ -z "$MEMTOP_SHM_DIR" ] || [ -e "$MEMTOP_SHM_DIR/memtop-$$" ] || echo "no segment"; '
          '/bin/true; /bin/true; /bin/true; echo done')
cmd = ["/bin/bash", "-c", script]
plain = t.run_plain(cmd)
if t.expect(plain, 0) and t.have_lib:
    shm = t.shm_dir()
    out = t.path("bind")
    res = t.run_preloaded(cmd, shm, {"LD_DEBUG": "bindings", "LD_DEBUG_OUTPUT": out})
    t.expect(res, 0, plain.out)
    lib = re.escape(os.path.basename(t.lib))
    ours = re.compile(r"^\s*(\d+):\s+binding file \S*%s \[\d+\] to .*`(execve|pthread_timedjoin_np)'"
                      % lib)
    anyb = re.compile(r"^\s*(\d+):\s+binding file (\S+) \[\d+\] to .*`([^']+)'")
    files = glob.glob(out + ".*")
    t.check(files, "LD_DEBUG wrote nothing under %s" % out)
    parent_binds, child_binds = 0, {}
    for f in files:
        pid = f.rsplit(".", 1)[1]
        with open(f, errors="replace") as fh:
            for line in fh:
                m = ours.match(line)
                if m and m.group(1) == pid:
                    parent_binds += m.group(2) == "execve"
                    continue
                m = anyb.match(line)
                if m and m.group(1) != pid:
                    what = "%s from %s" % (m.group(3), os.path.basename(m.group(2)))
                    child_binds[what] = child_binds.get(what, 0) + 1
    t.check(parent_binds > 0,
            "the forking shell never looked up execve itself (no prebind, or LD_DEBUG unread)")
    t.check(not child_binds, "fork children bound these themselves (name: times): %s" % child_binds)
t.finish()
