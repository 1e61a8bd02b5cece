/* cu_index.h -- the function scopes of compile units, indexed once.
 *
 * dwarf_getscopes and dwarf_getscopes_die walk a CU's DIE tree on every
 * call; in a large optimised CU (CPython's ceval.c) that is a millisecond
 * per address.  This walks each CU once, keeping only its subprograms,
 * inlined subroutines and entry points with their pc ranges and their
 * nearest function-like ancestor, and answers "which scopes contain pc"
 * from that. */
#ifndef MEMTOP_CU_INDEX_H
#define MEMTOP_CU_INDEX_H

#include <stddef.h>

#include <elfutils/libdw.h>

typedef struct mt_fn_node {
    Dwarf_Die die;
    int parent; /* nearest function-like ancestor node, or -1 */
    int tag;
    unsigned depth;
} mt_fn_node;

typedef struct mt_fn_range {
    Dwarf_Addr lo, hi; /* [lo, hi) */
    int node;
} mt_fn_range;

typedef struct mt_cu_scopes {
    Dwarf_Off cu_offset;
    mt_fn_node *nodes;
    size_t nnodes;
    mt_fn_range *ranges;
    size_t nranges;
} mt_cu_scopes;

typedef struct mt_cu_index {
    mt_cu_scopes *cus;
    size_t count, cap;
} mt_cu_index;

void mt_cu_index_free(mt_cu_index *x);

/* The index of cudie's CU (built on first use), or NULL (out of memory). */
const mt_cu_scopes *mt_cu_index_get(mt_cu_index *x, Dwarf_Die *cudie);

/* The innermost function-like node whose ranges contain pc, or -1. */
int mt_cu_scopes_find(const mt_cu_scopes *c, Dwarf_Addr pc);

#endif
