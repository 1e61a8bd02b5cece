/* calltree_priv.h -- the call tree's state, shared by calltree.c (building)
 * and calltree_sort.c (folding and sorting). */
#ifndef MEMTOP_MODEL_CALLTREE_PRIV_H
#define MEMTOP_MODEL_CALLTREE_PRIV_H

#include "calltree.h"
#include "group.h"

/* Where a trace's path ends: its last node and its allocation site's. */
typedef struct mt_ct_ends {
    uint32_t deep, site;
} mt_ct_ends;

struct mt_calltree {
    mt_ct_node *nodes;
    size_t n, cap;
    char *names; /* node names, NUL-terminated, back to back */
    size_t names_used, names_cap;
    uint32_t *slots; /* open addressing: node + 1, 0 = empty; at most half full */
    size_t nslots;   /* power of two */
    uint32_t *order; /* finish: children grouped by parent (and their starts) */
    size_t order_cap;
    uint32_t first_root;
    bool reverse;
    bool allocs_by_count; /* MT_SORT_ALLOCS sorts by alloc_count: no rates known */
    /* Kept from build to build until forgotten: the nodes [0, ntopo) and
     * their names [0, names_topo) (the paths seen; "(other)" nodes come
     * after and go at the next begin), and per trace id the ends of its
     * path (MT_CT_NONE: not seen), so a known trace is added without it.
     * While adding, a trace counts only in its last node (and its site's
     * own); finish adds every node's figures to its parent's. */
    size_t ntopo, names_topo;
    mt_ct_ends *ends;
    size_t nends;
    mt_ct_fig total;
};

/* o += f (leak: the higher). */
void mt_ct_fig_add(mt_ct_fig *o, const mt_ct_fig *f);

/* Adds every node's inclusive figures to its parent's (before folding). */
void mt_ct_propagate(mt_calltree *t);

/* A new node: child of parent (MT_CT_NONE: a root) named f, not hashed
 * (the caller keeps the hash slots); its index, or -1 (memory). */
long mt_ct_new_node(mt_calltree *t, uint32_t parent, const mt_ct_frame *f, uint64_t h);

#endif
