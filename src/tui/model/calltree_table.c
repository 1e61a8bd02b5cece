/* calltree_table.c -- the call tree of the table's rows (see calltree.h):
 * the viewer's tree shows the traces its flat table does, and with a
 * filter those whose path goes through a matching function. */
#include "calltree.h"
#include "filter.h"
#include "table.h"

/* Whether filter matches r's label, its function, file or module name (from
 * nm, as the table's filter) or a name on its path (from fn). */
static bool row_matches(const mt_table_row *r, const char *filter, const mt_namer *nm,
                        mt_ct_path_fn fn, void *ctx)
{
    if (mt_filter_empty(filter) || mt_filter_match(r->label, filter))
        return true;
    if (nm && mt_table_names_match(nm, r->trace_id, filter))
        return true;
    const mt_ct_frame *path = NULL;
    unsigned len = fn(ctx, r->trace_id, &path);
    for (unsigned k = 0; k < len; k++)
        if (mt_filter_match(path[k].name, filter))
            return true;
    return false;
}

int mt_calltree_from_table(mt_calltree *ct, mt_table *t, bool reverse, mt_sort_key key,
                           double threshold, const char *filter, const mt_namer *nm,
                           mt_ct_path_fn fn, void *ctx)
{
    size_t n;
    const mt_table_row *rows = mt_table_rows(t, &n);
    mt_calltree_begin(ct, reverse);
    for (size_t i = 0; i < n; i++) {
        const mt_table_row *r = &rows[i];
        if (!row_matches(r, filter, nm, fn, ctx))
            continue;
        const mt_leak_parts *lp = mt_table_leak(t, i);
        mt_ct_fig fig = {
            .live_bytes = r->live_bytes,
            .live_count = r->live_count,
            .alloc_count = r->alloc_count,
            .allocs_ps = r->allocs_ps,
            .temporary_count = r->temporary_count,
            .growth_bps = r->growth_bps,
            .leak = lp ? lp->score : 0,
        };
        if (mt_calltree_add_known(ct, r->trace_id, &fig))
            continue;
        const mt_ct_frame *path = NULL;
        unsigned len = fn(ctx, r->trace_id, &path);
        if (mt_calltree_add(ct, r->trace_id, path, len, &fig))
            return -1;
    }
    mt_calltree_allocs_by_count(ct, !mt_table_rates_known(t)); /* as the table's own sort */
    return mt_calltree_finish(ct, key, threshold);
}
