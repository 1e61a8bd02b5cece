/* calltree_sort.c -- finishing a call tree: the children of each node
 * below the threshold folded into one "(other)" child, the rest sorted by
 * the sort key and linked (see calltree.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calltree_priv.h"
#include "grow.h"

void mt_calltree_allocs_by_count(mt_calltree *t, bool by_count)
{
    t->allocs_by_count = by_count;
}

double mt_ct_key(const mt_ct_fig *f, mt_sort_key key, bool allocs_by_count)
{
    switch (key) {
    case MT_SORT_COUNT:
        return f->live_count;
    case MT_SORT_ALLOCS:
        return allocs_by_count ? f->alloc_count : f->allocs_ps;
    case MT_SORT_TEMPORARY:
        return f->temporary_count;
    case MT_SORT_GROWTH:
        return f->growth_bps;
    case MT_SORT_LEAK:
        return f->leak;
    default:
        return f->live_bytes;
    }
}

typedef struct sort_ctx {
    const mt_calltree *t;
    mt_sort_key key;
} sort_ctx;

static int cmp_double_desc(double a, double b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

static int cmp_nodes(const void *pa, const void *pb, void *arg)
{
    const sort_ctx *c = arg;
    const mt_ct_node *a = &c->t->nodes[*(const uint32_t *)pa];
    const mt_ct_node *b = &c->t->nodes[*(const uint32_t *)pb];
    bool by_count = c->t->allocs_by_count;
    int r = cmp_double_desc(mt_ct_key(&a->incl, c->key, by_count),
                            mt_ct_key(&b->incl, c->key, by_count));
    if (!r)
        r = cmp_double_desc(a->incl.live_bytes, b->incl.live_bytes);
    if (!r && a->other != b->other)
        r = a->other ? 1 : -1; /* "(other)" last among equals */
    if (!r)
        r = strcmp(c->t->names + a->name, c->t->names + b->name);
    return r ? r : a->inlined - b->inlined;
}

/* order[0..n+1] = starts of each parent's children (parent n: the roots),
 * order[n+2..]: the children, grouped by parent in node order. */
static int group_children(mt_calltree *t, size_t n)
{
    size_t need = 2 * n + 2;
    if (mt_grow((void **)&t->order, &t->order_cap, need, sizeof *t->order))
        return -1;
    uint32_t *start = t->order, *kids = t->order + n + 2;
    memset(start, 0, (n + 2) * sizeof *start);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = t->nodes[i].parent;
        if (t->nodes[i].ntraces) /* nodes of traces not in this build stay out */
            start[(p == MT_CT_NONE ? n : p) + 1]++;
    }
    for (size_t p = 0; p <= n; p++)
        start[p + 1] += start[p];
    for (size_t i = 0; i < n; i++) {
        uint32_t p = t->nodes[i].parent;
        if (!t->nodes[i].ntraces)
            continue;
        p = p == MT_CT_NONE ? (uint32_t)n : p;
        kids[start[p]++] = (uint32_t)i; /* start[p] ends at p's end, the next one's start */
    }
    memmove(start + 1, start, (n + 1) * sizeof *start);
    start[0] = 0;
    return 0;
}

/* Folds kids[0..k) below threshold into a new "(other)" node, compacting
 * the kept ones to the front; returns how many remain (the other last). */
static long fold(mt_calltree *t, uint32_t parent, uint32_t *kids, size_t k, double threshold)
{
    static const mt_ct_frame other_frame = {"(other)", false};
    mt_ct_node sum = {.ntraces = 0};
    size_t kept = 0, folded = 0;
    for (size_t i = 0; i < k; i++) {
        const mt_ct_node *c = &t->nodes[kids[i]];
        if (fabs(c->incl.live_bytes) >= threshold) {
            kids[kept++] = kids[i];
            continue;
        }
        if (!folded++ || c->top_live > sum.top_live) {
            sum.top_trace = c->top_trace;
            sum.top_live = c->top_live;
        }
        sum.ntraces += c->ntraces;
        mt_ct_fig_add(&sum.incl, &c->incl);
    }
    if (!folded)
        return (long)kept;
    long o = mt_ct_new_node(t, parent, &other_frame, 0);
    if (o < 0)
        return -1;
    mt_ct_node *on = &t->nodes[o];
    on->other = true;
    on->ntraces = sum.ntraces;
    on->top_trace = sum.top_trace;
    on->top_live = sum.top_live;
    on->incl = on->own = sum.incl; /* it has no children: all of it is its own */
    kids[kept++] = (uint32_t)o;
    return (long)kept;
}

/* Links kids[0..k) as parent's children in sort order. */
static void link_sorted(mt_calltree *t, uint32_t parent, uint32_t *kids, size_t k, mt_sort_key key)
{
    sort_ctx c = {t, key};
    if (k > 1)
        qsort_r(kids, k, sizeof *kids, cmp_nodes, &c);
    for (size_t i = 0; i < k; i++)
        t->nodes[kids[i]].next_sibling = i + 1 < k ? kids[i + 1] : MT_CT_NONE;
    uint32_t first = k ? kids[0] : MT_CT_NONE;
    if (parent == MT_CT_NONE)
        t->first_root = first;
    else {
        t->nodes[parent].first_child = first;
        t->nodes[parent].nchildren = (uint32_t)k;
    }
}

int mt_calltree_finish(mt_calltree *t, mt_sort_key key, double threshold)
{
    size_t n = t->n; /* the "(other)" nodes come after: they have no children */
    mt_ct_propagate(t);
    if (group_children(t, n))
        return -1;
    for (size_t p = 0; p <= n; p++) {
        uint32_t *start = t->order, *kids = t->order + n + 2 + start[p];
        size_t k = start[p + 1] - start[p];
        uint32_t parent = p == n ? MT_CT_NONE : (uint32_t)p;
        long kept = threshold > 0 ? fold(t, parent, kids, k, threshold) : (long)k;
        if (kept < 0)
            return -1;
        link_sorted(t, parent, kids, (size_t)kept, key);
    }
    return 0;
}
