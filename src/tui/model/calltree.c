/* calltree.c -- building a call tree: the nodes, their names and the hash
 * from (parent, name, inlined) to node (see calltree.h; the folding and the
 * sort are in calltree_sort.c). */
#include <stdlib.h>
#include <string.h>

#include "calltree_priv.h"
#include "grow.h"

mt_calltree *mt_calltree_new(void)
{
    return calloc(1, sizeof(mt_calltree));
}

void mt_calltree_free(mt_calltree *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->names);
    free(t->slots);
    free(t->order);
    free(t->ends);
    free(t);
}

void mt_calltree_forget(mt_calltree *t)
{
    t->n = t->ntopo = 0;
    t->names_used = t->names_topo = 0;
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
    if (t->ends)
        memset(t->ends, 0xff, t->nends * sizeof *t->ends); /* MT_CT_NONE */
}

void mt_calltree_begin(mt_calltree *t, bool reverse)
{
    if (reverse != t->reverse)
        mt_calltree_forget(t);
    t->reverse = reverse;
    t->n = t->ntopo; /* the "(other)" nodes of the last build go */
    t->names_used = t->names_topo;
    for (size_t i = 0; i < t->n; i++) {
        mt_ct_node *nd = &t->nodes[i];
        nd->first_child = nd->next_sibling = MT_CT_NONE;
        nd->nchildren = nd->ntraces = 0;
        memset(&nd->incl, 0, sizeof nd->incl);
        memset(&nd->own, 0, sizeof nd->own);
    }
    t->first_root = MT_CT_NONE;
    memset(&t->total, 0, sizeof t->total);
}

static uint64_t node_hash(uint32_t parent, const char *name, bool inlined)
{
    uint64_t h = mt_label_hash(name) ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
    return inlined ? h ^ 0x5bd1e995ull : h;
}

/* The slots stay at most half full; rehash from the nodes when growing. */
static int reserve_slots(mt_calltree *t)
{
    if ((t->n + 1) * 2 <= t->nslots)
        return 0;
    size_t ns = mt_grown_cap(t->nslots, (t->n + 1) * 2, 1024);
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = t->nodes[i].hash & (ns - 1);
        while (s[j])
            j = (j + 1) & (ns - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = ns;
    return 0;
}

long mt_ct_new_node(mt_calltree *t, uint32_t parent, const mt_ct_frame *f, uint64_t h)
{
    size_t len = strlen(f->name) + 1;
    if (t->n >= MT_CT_NONE - 1 || t->names_used + len > UINT32_MAX ||
        mt_grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes) ||
        mt_grow((void **)&t->names, &t->names_cap, t->names_used + len, 1))
        return -1;
    mt_ct_node *nd = &t->nodes[t->n];
    memset(nd, 0, sizeof *nd);
    memcpy(t->names + t->names_used, f->name, len);
    nd->name = (uint32_t)t->names_used;
    t->names_used += len;
    nd->parent = parent;
    nd->first_child = nd->next_sibling = MT_CT_NONE;
    nd->depth = parent == MT_CT_NONE ? 0 : t->nodes[parent].depth + 1;
    nd->inlined = f->inlined;
    nd->hash = h;
    return (long)t->n++;
}

/* The child of parent for frame f (made now if new), or -1 (memory). */
static long child_of(mt_calltree *t, uint32_t parent, const mt_ct_frame *f)
{
    const char *name = f->name ? f->name : "?";
    mt_ct_frame fr = {name, f->inlined};
    uint64_t h = node_hash(parent, name, f->inlined);
    if (reserve_slots(t))
        return -1;
    size_t j = h & (t->nslots - 1);
    for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
        const mt_ct_node *nd = &t->nodes[t->slots[j] - 1];
        if (nd->hash == h && nd->parent == parent && nd->inlined == f->inlined &&
            strcmp(t->names + nd->name, name) == 0)
            return (long)t->slots[j] - 1;
    }
    long i = mt_ct_new_node(t, parent, &fr, h);
    if (i >= 0)
        t->slots[j] = (uint32_t)i + 1;
    return i;
}

void mt_ct_fig_add(mt_ct_fig *o, const mt_ct_fig *f)
{
    o->live_bytes += f->live_bytes;
    o->live_count += f->live_count;
    o->alloc_count += f->alloc_count;
    o->allocs_ps += f->allocs_ps;
    o->temporary_count += f->temporary_count;
    o->growth_bps += f->growth_bps;
    if (f->leak > o->leak)
        o->leak = f->leak;
}

/* nd counts n traces of figures fig, the largest top (live bytes top_live). */
static void count_in(mt_ct_node *nd, uint32_t n, uint32_t top, double top_live,
                     const mt_ct_fig *fig)
{
    if (!nd->ntraces || top_live > nd->top_live) {
        nd->top_trace = top;
        nd->top_live = top_live;
    }
    nd->ntraces += n;
    mt_ct_fig_add(&nd->incl, fig);
}

void mt_ct_propagate(mt_calltree *t)
{
    for (size_t i = t->n; i-- > 0;) { /* a parent's index is below its children's */
        const mt_ct_node *nd = &t->nodes[i];
        if (nd->ntraces && nd->parent != MT_CT_NONE)
            count_in(&t->nodes[nd->parent], nd->ntraces, nd->top_trace, nd->top_live, &nd->incl);
    }
}

/* A trace ending at node deep (the last of its path) and allocating at
 * node site: its figures there; mt_ct_propagate adds them to the rest of
 * its path. */
static void count_trace(mt_calltree *t, uint32_t trace_id, uint32_t deep, uint32_t site,
                        const mt_ct_fig *fig)
{
    count_in(&t->nodes[deep], 1, trace_id, fig->live_bytes, fig);
    mt_ct_fig_add(&t->nodes[site].own, fig);
    mt_ct_fig_add(&t->total, fig);
}

/* Ids past this are not remembered (added by their path every time). */
#define MAX_REMEMBERED_ID (1u << 24)

static void remember_path(mt_calltree *t, uint32_t trace_id, uint32_t deep, uint32_t site)
{
    if (trace_id >= MAX_REMEMBERED_ID)
        return;
    size_t old = t->nends;
    if (mt_grow((void **)&t->ends, &t->nends, (size_t)trace_id + 1, sizeof *t->ends))
        return; /* memory: added by its path next time */
    memset(t->ends + old, 0xff, (t->nends - old) * sizeof *t->ends); /* MT_CT_NONE */
    t->ends[trace_id] = (mt_ct_ends){deep, site};
}

static bool same_frame(const mt_ct_frame *a, const mt_ct_frame *b)
{
    return a->inlined == b->inlined && a->name && b->name && strcmp(a->name, b->name) == 0;
}

int mt_calltree_add(mt_calltree *t, uint32_t trace_id, const mt_ct_frame *path, unsigned n,
                    const mt_ct_fig *fig)
{
    static const mt_ct_frame unknown = {"[unknown]", false};
    uint32_t cur = MT_CT_NONE, site = MT_CT_NONE;
    const mt_ct_frame *prev = NULL;
    for (unsigned k = 0; k < (n ? n : 1); k++) {
        const mt_ct_frame *f = !n ? &unknown : t->reverse ? &path[n - 1 - k] : &path[k];
        if (prev && same_frame(prev, f))
            continue; /* direct recursion: one node */
        long c = child_of(t, cur, f);
        if (c < 0)
            return -1;
        cur = (uint32_t)c;
        prev = f;
        if (k == 0 && t->reverse)
            site = cur;
    }
    if (!t->reverse)
        site = cur;
    count_trace(t, trace_id, cur, site, fig);
    t->ntopo = t->n;
    t->names_topo = t->names_used;
    remember_path(t, trace_id, cur, site);
    return 0;
}

bool mt_calltree_add_known(mt_calltree *t, uint32_t trace_id, const mt_ct_fig *fig)
{
    if (trace_id >= t->nends || t->ends[trace_id].deep == MT_CT_NONE)
        return false;
    count_trace(t, trace_id, t->ends[trace_id].deep, t->ends[trace_id].site, fig);
    return true;
}

size_t mt_calltree_count(const mt_calltree *t)
{
    return t->n;
}

const mt_ct_node *mt_calltree_node(const mt_calltree *t, uint32_t i)
{
    return i < t->n ? &t->nodes[i] : NULL;
}

const char *mt_calltree_name(const mt_calltree *t, const mt_ct_node *n)
{
    return t->names + n->name;
}

uint32_t mt_calltree_first_root(const mt_calltree *t)
{
    return t->first_root;
}

const mt_ct_fig *mt_calltree_totals(const mt_calltree *t)
{
    return &t->total;
}

bool mt_calltree_reverse(const mt_calltree *t)
{
    return t->reverse;
}
