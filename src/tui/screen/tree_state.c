/* tree_state.c -- the call tree panel's data (see tree_keys.h): the tree
 * built from the table's rows (so the filter, the baseline, pause and a
 * recording's cursor apply as in the table), each trace's path from the
 * background symbolizer, which nodes are open, and the lines on screen.
 * The selection follows its node across rebuilds by path key. */
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "calltree_path.h"
#include "group.h"
#include "grow.h"
#include "tree_keys.h"

void mt_tree_free(mt_tree_panel *tp)
{
    mt_calltree_free(tp->tree);
    free(tp->pb);
    if (tp->skip)
        mt_plumbing_free(tp->skip);
    free(tp->skip);
    free(tp->rows);
    free(tp->flipped);
}

static unsigned chain_of(void *ctx, uint64_t addr, mt_frame *out, unsigned max)
{
    mt_app *a = ctx;
    bool final;
    unsigned n = mt_symworker_frames(a->sym, addr, a->panels.tree.path_trace, out, max, &final);
    if (!final)
        a->panels.tree.provisional = true;
    return n;
}

static unsigned path_of(void *ctx, uint32_t id, const mt_ct_frame **out)
{
    mt_app *a = ctx;
    mt_tree_panel *tp = &a->panels.tree;
    static const mt_ct_frame overflow = {"(overflow)", false};
    unsigned n;
    const uint64_t *f = mt_defs_frames(&a->src.view.defs, id, &n);
    tp->path_trace = id; /* for chain_of */
    unsigned len = mt_ct_path_make(tp->pb, f, f ? n : 0, chain_of, a, tp->skip, out);
    if (!len && id == 0) { /* backtraces without a trace of their own, as in the exports */
        *out = &overflow;
        len = 1;
    }
    return len;
}

static int ensure_scratch(mt_tree_panel *tp)
{
    if (!tp->tree && !(tp->tree = mt_calltree_new()))
        return -1;
    if (!tp->pb && !(tp->pb = malloc(sizeof *tp->pb)))
        return -1;
    if (!tp->skip) {
        mt_plumbing *p = calloc(1, sizeof *p);
        if (!p || !mt_plumbing_init(p, getenv("MEMTOP_SKIP_FUNCS"))) {
            free(p);
            return -1;
        }
        tp->skip = p;
    }
    return 0;
}

void mt_tree_rebuild(mt_app *a)
{
    mt_tree_panel *tp = &a->panels.tree;
    uint64_t gen = mt_symworker_generation(a->sym);
    /* The kept paths go when names they lacked may have come, or with new
     * trace ids (exec); names arriving for other traces change nothing. */
    if (tp->tree && ((gen != tp->names_gen && tp->provisional) || a->src.image != tp->image)) {
        mt_calltree_forget(tp->tree);
        tp->provisional = false;
    }
    tp->names_gen = gen;
    tp->image = a->src.image;
    mt_namer namer = mt_names_namer(&a->names);
    if (ensure_scratch(tp) ||
        mt_calltree_from_table(tp->tree, a->table, tp->reverse, a->ui.sort, tp->threshold,
                               a->ui.filter, &namer, path_of, a) != 0) {
        mt_app_status(a, true, "out of memory building the call tree");
        if (tp->tree)
            mt_calltree_begin(tp->tree, tp->reverse);
    }
    mt_tree_relayout(tp);
}

static long find_set(const mt_tree_panel *tp, uint64_t k, bool *found)
{
    size_t lo = 0, hi = tp->nflipped;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tp->flipped[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < tp->nflipped && tp->flipped[lo] == k;
    return (long)lo;
}

/* Entries: key | 1 opened by the user, key (low bit 0) closed by the user. */
static void set_remove(mt_tree_panel *tp, uint64_t e)
{
    bool found;
    long at = find_set(tp, e, &found);
    if (!found)
        return;
    memmove(tp->flipped + at, tp->flipped + at + 1,
            (tp->nflipped - (size_t)at - 1) * sizeof *tp->flipped);
    tp->nflipped--;
}

static bool set_add(mt_tree_panel *tp, uint64_t e)
{
    bool found;
    long at = find_set(tp, e, &found);
    if (found)
        return true;
    if (mt_grow((void **)&tp->flipped, &tp->cap_flipped, tp->nflipped + 1, sizeof *tp->flipped))
        return false;
    memmove(tp->flipped + at + 1, tp->flipped + at,
            (tp->nflipped - (size_t)at) * sizeof *tp->flipped);
    tp->flipped[at] = e;
    tp->nflipped++;
    return true;
}

bool mt_tree_is_open(const mt_tree_panel *tp, uint32_t i, uint64_t k)
{
    const mt_ct_node *nd = mt_calltree_node(tp->tree, i);
    bool opened, closed;
    find_set(tp, k | 1, &opened);
    find_set(tp, k, &closed);
    return nd->first_child != MT_CT_NONE && (opened || (!closed && nd->nchildren == 1));
}

bool mt_tree_flip(mt_tree_panel *tp, uint32_t i, uint64_t k)
{
    bool open = mt_tree_is_open(tp, i, k);
    set_remove(tp, open ? k | 1 : k);
    return set_add(tp, open ? k : k | 1);
}

static uint64_t path_key(uint64_t parent, const mt_calltree *t, const mt_ct_node *nd)
{
    uint64_t h = mt_label_hash(mt_calltree_name(t, nd)) ^ (nd->inlined ? 0x2545f4914f6cdd1dull : 0);
    return ((parent ^ h) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull) & ~1ull; /* bit 0: set_add */
}

/* Appends the lines of first and its open descendants; -1 (memory). */
static int lay_out(mt_tree_panel *tp, uint32_t first, uint64_t parent_key)
{
    for (uint32_t i = first; i != MT_CT_NONE;) {
        const mt_ct_node *nd = mt_calltree_node(tp->tree, i);
        uint64_t k = path_key(parent_key, tp->tree, nd);
        if (mt_grow((void **)&tp->rows, &tp->cap_rows, tp->nrows + 1, sizeof *tp->rows))
            return -1;
        tp->rows[tp->nrows++] = (mt_tree_row){i, k};
        if (mt_tree_is_open(tp, i, k) && lay_out(tp, nd->first_child, k))
            return -1;
        i = nd->next_sibling;
    }
    return 0;
}

void mt_tree_relayout(mt_tree_panel *tp)
{
    tp->nrows = 0;
    if (!tp->tree)
        return;
    uint64_t seed = tp->reverse ? 0x52455645ull : 0x544f50ull;
    lay_out(tp, mt_calltree_first_root(tp->tree), seed); /* memory: the lines so far */
    for (size_t r = 0; r < tp->nrows; r++)
        if (tp->rows[r].key == tp->sel_key) {
            tp->p.sel = (long)r;
            return;
        }
    if (tp->p.sel >= (long)tp->nrows)
        tp->p.sel = (long)tp->nrows - 1;
    if (tp->p.sel < 0)
        tp->p.sel = 0;
    if (tp->nrows)
        tp->sel_key = tp->rows[tp->p.sel].key;
}
