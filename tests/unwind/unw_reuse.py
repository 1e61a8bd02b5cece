#!/usr/bin/env python3
"""The own walker's replay of a thread's previous walk (unwind_memo.h) on the
patterns of unw_reuse.c: one deep stack again and again, a shared outer part
under random inner parts, recursion of varying depth, one function at the
same CFA under two callers of equal frames, signal handlers on an
alternate stack (which is then unmapped) interleaved with normal
allocations -- at the default depth, where handler walks fall back at the
signal frame, and at MEMTOP_DEPTH=3, where they stop before it and so leave
walks on the alternate stack behind --, dlclose between walks of one
thread, and 4 threads at once.  Each runs with MEMTOP_UNWIND=check: no walk
may disagree with libunwind, and the replay must have been used ("reuse=" in
the summary); for the deep stack, in nearly every walk."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unwlib import Test, check_agree, env_path, run_check  # noqa: E402

t = Test("unwind_reuse")
prog = t.prog("unw_reuse")
a, b = env_path("UNW_SWAP_A"), env_path("UNW_SWAP_B")

# tag, argv, extra env, minimum own walks, minimum share of them that replayed
runs = [
    ("deep", ["deep"], {}, 2000, 0.95),
    ("shared", ["shared"], {}, 3000, 0.5),
    ("recurse", ["recurse"], {}, 2000, 0.5),
    ("callers", ["callers"], {}, 2000, 0.9),
    ("altstack", ["altstack"], {}, 900, 0.5),  # the 300 handler walks fall back
    ("altstack-depth3", ["altstack"], {"MEMTOP_DEPTH": "3"}, 1200, 0.0),
    ("dlclose", ["dlclose", a, b], {}, 24, 0.05),
    ("threads", ["threads"], {}, 4 * 50 * 18, 0.5),
]
for tag, args, env, min_own, min_share in runs:
    s = run_check(t, [prog] + args, tag, compare_out=False, env=env)
    check_agree(t, s, tag, min_own=min_own)
    if s is None:
        continue
    t.check(s.reuse is not None, "%s: the summary has no reuse count" % tag)
    if s.reuse is not None:
        t.check(s.reuse > 0 and s.reuse >= min_share * s.own,
                "%s: %d of %d walks replayed a previous walk (want >= %.0f %%)"
                % (tag, s.reuse, s.own, 100 * min_share))

res = t.run_plain([prog, "callers"])
t.check(re.search(r"^same_cfa 1$", res.out, re.M) is not None,
        "premise: the two callers did not put the common function at one CFA: %r" % res.out)
t.finish()
