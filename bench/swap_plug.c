/* swap_plug.c -- the plugin memtop-swap-traces loads (bench/swap_traces.c):
 * plug_traces(depth) allocates one block (kept: a leak) at each of the
 * 2^depth leaves of a binary recursion, so each block has a backtrace of
 * its own, every one of them through the same few call sites in this
 * plugin.  Built twice (libmemtop_swap_plug_a.so and, with SWAP_PLUG_B,
 * _b.so), loaded one after the other at one place: the first one's frames
 * are then those of a module that is no longer the one at their address. */
#include "trace_tree.h"

#ifdef SWAP_PLUG_B
/* Another file (build-id): a module of its own, not the first one again. */
int plug_b_only(void)
{
    return 2;
}
#endif

void plug_traces(int depth)
{
    trace_tree(depth, 32);
}
