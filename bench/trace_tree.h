/* trace_tree.h -- many backtraces from one file, for the benchmarks that
 * need a process (or a plugin) with 2^depth traces of its own:
 * trace_tree(depth, size) leaks one block of `size` bytes at each leaf of
 * a binary recursion through two call sites, so every block has a
 * backtrace of its own.  Static: each program or plugin that includes it
 * has the frames in its own code (bench/dlclose_cost.c, bench/swap_plug.c). */
#ifndef MT_BENCH_TRACE_TREE_H
#define MT_BENCH_TRACE_TREE_H

#include <stddef.h>
#include <stdlib.h>

static void *volatile g_trace_tree_sink;

__attribute__((noinline)) static void trace_tree_walk(unsigned bits, int depth, size_t size);

__attribute__((noinline)) static void trace_tree_left(unsigned bits, int depth, size_t size)
{
    trace_tree_walk(bits, depth, size);
}

__attribute__((noinline)) static void trace_tree_right(unsigned bits, int depth, size_t size)
{
    trace_tree_walk(bits, depth, size);
}

/* The leaf the bits of `bits` lead to, depth levels down. */
__attribute__((noinline)) static void trace_tree_walk(unsigned bits, int depth, size_t size)
{
    if (depth == 0) {
        g_trace_tree_sink = malloc(size);
        return;
    }
    if (bits & 1)
        trace_tree_left(bits >> 1, depth - 1, size);
    else
        trace_tree_right(bits >> 1, depth - 1, size);
}

/* One leaked block at each of the 2^depth leaves. */
static inline void trace_tree(int depth, size_t size)
{
    for (unsigned bits = 0; bits < 1u << depth; bits++)
        trace_tree_walk(bits, depth, size);
}

#endif
