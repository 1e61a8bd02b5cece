#!/usr/bin/env python3
"""The program's failed dlopen, never read with dlerror, across memtop's own
dl calls (progs/pf_dlerror.c): the error message's block is counted freed
when the program's own dl call frees it (not live for ever because memtop's
dl call freed it inside memtop), and dlerror still returns the error after
memtop's call (the output is the plain run's)."""
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

t = Test("dlerror")
snap = t.run_all([t.prog("pf_dlerror")], 0)
if snap:
    # Freed by the program's dlclose (after memtop's dlclose hook).
    t.check_marker(snap, 3001, "message of the error dlclose discards", alloc=1, free=1, live=0)
    # Freed by the program's dlerror calls, after memtop bound fexecve.
    t.check_marker(snap, 3011, "message of the error dlerror returns", alloc=1, free=1, live=0)
t.finish()
