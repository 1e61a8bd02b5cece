/* calltree.h -- call trees: the traces merged by call path, top-down (from
 * main or the thread entry down to the allocation sites) or bottom-up (from
 * the allocation site up to its callers), so that one sees which part of a
 * program holds the memory.  Pure: the caller supplies each trace's path of
 * function names and its figures (the viewer: the table's rows, so the
 * baseline, the filter and replay carry over; the exports: the snapshot).
 *
 * A node is a call path, not a function.  Rules (docs/man "CALL TREES"):
 *  - a trace adds its figures once to every node on its path (inclusive),
 *    and to its allocation site's node (own): top-down the last node of its
 *    path, bottom-up the first;
 *  - recursion: consecutive frames of the same function (direct recursion)
 *    are one node; a function that comes back after another (a -> b -> a)
 *    is a node again below b.  Either way a trace is counted once per node,
 *    so no inclusive figure counts the same bytes twice, the children of a
 *    node never sum to more than it, and the roots sum to the totals;
 *  - inlined functions are nodes of their own (flag inlined);
 *  - children whose |inclusive live bytes| is below the threshold are
 *    folded into one "(other)" child (their own and inclusive summed);
 *  - the leak score of a node is the highest of its traces' (a score is
 *    not additive); every other figure is summed.
 * Memory: ~190 B per node (the node 168 B, its name, hash slots, the sort's
 * scratch) and 8 B per trace id; reused from build to build.  Cost per
 * build: O(traces + nodes) for traces whose path is kept, plus the sort of
 * each node's children (docs/performance.md, "Call trees").
 * Not thread-safe. */
#ifndef MEMTOP_MODEL_CALLTREE_H
#define MEMTOP_MODEL_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_options.h"

#define MT_CT_NONE UINT32_MAX /* no node */

/* One source frame of a path. */
typedef struct mt_ct_frame {
    const char *name; /* function, else "module+0xoff"; copied by the tree */
    bool inlined;     /* inlined into its caller */
} mt_ct_frame;

/* Figures of a trace, or summed over a node (signed: deltas with a baseline). */
typedef struct mt_ct_fig {
    double live_bytes, live_count, alloc_count, allocs_ps, temporary_count, growth_bps;
    double leak; /* leak score: the highest, not a sum */
} mt_ct_fig;

typedef struct mt_ct_node {
    uint32_t name;                      /* offset in the tree's name arena: mt_calltree_name */
    uint32_t parent;                    /* MT_CT_NONE for a root */
    uint32_t first_child, next_sibling; /* in sort order after finish */
    uint32_t depth, nchildren, ntraces;
    uint32_t top_trace;  /* the trace with the most live bytes through it */
    double top_live;     /* its live bytes */
    bool inlined, other; /* other: the "(other)" node of folded siblings */
    uint64_t hash;
    mt_ct_fig incl, own;
} mt_ct_node;

typedef struct mt_calltree mt_calltree;

mt_calltree *mt_calltree_new(void); /* NULL when out of memory */
void mt_calltree_free(mt_calltree *t);
/* Starts a build: every figure zero.  reverse: bottom-up.  The paths of
 * the traces added before are kept (a node no trace of this build goes
 * through is not shown), until mt_calltree_forget or a change of
 * direction: so a refresh of the same traces walks up from each one's
 * deepest node instead of hashing its path again. */
void mt_calltree_begin(mt_calltree *t, bool reverse);
/* Drops the kept paths: call it when the names of the frames or the
 * meaning of the trace ids change (new names from the symbolizer, exec). */
void mt_calltree_forget(mt_calltree *t);
/* Adds a trace: path[0..n) outermost first, allocation site last, whichever
 * the direction (n == 0: the node "[unknown]").  0, or -1 (memory). */
int mt_calltree_add(mt_calltree *t, uint32_t trace_id, const mt_ct_frame *path, unsigned n,
                    const mt_ct_fig *fig);
/* Adds trace_id by the path it was last added with, if the tree kept it
 * (else false: add it with its path). */
bool mt_calltree_add_known(mt_calltree *t, uint32_t trace_id, const mt_ct_fig *fig);
/* Folds (threshold: live bytes, 0 = none) and sorts each node's children
 * descending by key (mt_table_build's keys, on the inclusive figures; ties:
 * live bytes, then name).  0, or -1 (memory). */
int mt_calltree_finish(mt_calltree *t, mt_sort_key key, double threshold);

size_t mt_calltree_count(const mt_calltree *t);
const mt_ct_node *mt_calltree_node(const mt_calltree *t, uint32_t i);
const char *mt_calltree_name(const mt_calltree *t, const mt_ct_node *n);
/* The figures of the nodes are complete after finish only. */
/* The first root in sort order (MT_CT_NONE when empty); siblings follow. */
uint32_t mt_calltree_first_root(const mt_calltree *t);
/* The sums over every trace added (what the roots sum to). */
const mt_ct_fig *mt_calltree_totals(const mt_calltree *t);
bool mt_calltree_reverse(const mt_calltree *t);
/* One trace's path (outermost first, as mt_calltree_add wants it) into
 * *out, valid until the next call; returns its length. */
typedef unsigned (*mt_ct_path_fn)(void *ctx, uint32_t trace_id, const mt_ct_frame **out);

typedef struct mt_table mt_table;
typedef struct mt_namer mt_namer;
/* The tree of the rows of t's last build (TRACE grouping: so the baseline
 * and replay's snapshot carry over), each row's path from fn: begin, add
 * every row (leak score from mt_table_leak), finish.  filter (NULL or "":
 * none; see filter.h) keeps the rows whose label, function, file or
 * module name (from nm, NULL: none, as the table's filter) or a name on
 * whose path it matches: the tree's `/` finds a caller, not only an
 * allocation site.  0 or -1. */
int mt_calltree_from_table(mt_calltree *ct, mt_table *t, bool reverse, mt_sort_key key,
                           double threshold, const char *filter, const mt_namer *nm,
                           mt_ct_path_fn fn, void *ctx);
/* Without per-row rates (a replay, the first snapshot: every allocs_ps 0)
 * the next finish sorts MT_SORT_ALLOCS by the allocation count, as the
 * table does (mt_table_build); until changed. */
void mt_calltree_allocs_by_count(mt_calltree *t, bool by_count);
/* The value key sorts by, for f (allocs_by_count: as above). */
double mt_ct_key(const mt_ct_fig *f, mt_sort_key key, bool allocs_by_count);

#endif
