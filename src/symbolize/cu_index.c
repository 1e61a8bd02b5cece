/* cu_index.c -- see cu_index.h. */
#include "cu_index.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

static bool is_function(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

static bool push_node(mt_cu_scopes *c, size_t *cap, const mt_fn_node *n)
{
    if (c->nnodes == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        mt_fn_node *p = realloc(c->nodes, nc * sizeof *p);
        if (!p)
            return false;
        c->nodes = p;
        *cap = nc;
    }
    c->nodes[c->nnodes++] = *n;
    return true;
}

static bool push_range(mt_cu_scopes *c, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi, int node)
{
    if (c->nranges == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        mt_fn_range *p = realloc(c->ranges, nc * sizeof *p);
        if (!p)
            return false;
        c->ranges = p;
        *cap = nc;
    }
    c->ranges[c->nranges++] = (mt_fn_range){lo, hi, node};
    return true;
}

typedef struct walk {
    mt_cu_scopes *c;
    size_t node_cap, range_cap;
    bool oom;
} walk;

/* Records die if it is a function with pc ranges; the node index for its
 * children (parent when die is not recorded); -2: do not descend. */
static int record(walk *w, Dwarf_Die *die, int parent, unsigned depth)
{
    int tag = dwarf_tag(die);
    if (!is_function(tag))
        return parent;
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    int node = (int)w->c->nnodes;
    bool any = false;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (!any && !push_node(w->c, &w->node_cap, &(mt_fn_node){*die, parent, tag, depth}))
            return w->oom = true, -2;
        any = true;
        if (!push_range(w->c, &w->range_cap, lo, hi, node))
            return w->oom = true, -2;
    }
    return any ? node : -2; /* an abstract instance: nothing below has code */
}

/* Depth-first over the CU without recursion. */
static void walk_cu(walk *w, Dwarf_Die *cudie)
{
    Dwarf_Die stack[MAX_DEPTH];
    int parents[MAX_DEPTH];
    unsigned sp = 0;
    if (dwarf_child(cudie, &stack[0]) != 0)
        return;
    parents[0] = -1;
    for (;;) {
        int self = record(w, &stack[sp], parents[sp], sp);
        if (w->oom)
            return;
        if (self != -2 && sp + 1 < MAX_DEPTH && dwarf_child(&stack[sp], &stack[sp + 1]) == 0) {
            parents[++sp] = self;
            continue;
        }
        while (dwarf_siblingof(&stack[sp], &stack[sp]) != 0) {
            if (sp == 0)
                return;
            sp--;
        }
    }
}

static void free_scopes(mt_cu_scopes *c)
{
    free(c->nodes);
    free(c->ranges);
}

void mt_cu_index_free(mt_cu_index *x)
{
    for (size_t i = 0; i < x->count; i++)
        free_scopes(&x->cus[i]);
    free(x->cus);
    memset(x, 0, sizeof *x);
}

const mt_cu_scopes *mt_cu_index_get(mt_cu_index *x, Dwarf_Die *cudie)
{
    Dwarf_Off off = dwarf_dieoffset(cudie);
    for (size_t i = 0; i < x->count; i++)
        if (x->cus[i].cu_offset == off)
            return &x->cus[i];
    if (x->count == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 16;
        mt_cu_scopes *p = realloc(x->cus, nc * sizeof *p);
        if (!p)
            return NULL;
        x->cus = p;
        x->cap = nc;
    }
    walk w = {&x->cus[x->count], 0, 0, false};
    memset(w.c, 0, sizeof *w.c);
    w.c->cu_offset = off;
    walk_cu(&w, cudie);
    if (w.oom) {
        free_scopes(w.c);
        return NULL;
    }
    return &x->cus[x->count++];
}

int mt_cu_scopes_find(const mt_cu_scopes *c, Dwarf_Addr pc)
{
    int best = -1;
    for (size_t i = 0; i < c->nranges; i++) {
        const mt_fn_range *r = &c->ranges[i];
        if (pc >= r->lo && pc < r->hi &&
            (best < 0 || c->nodes[r->node].depth > c->nodes[best].depth))
            best = r->node;
    }
    return best;
}
