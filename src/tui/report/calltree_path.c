/* calltree_path.c -- a trace's call path from its machine frames (see
 * calltree_path.h). */
#include "calltree_path.h"

#include <inttypes.h>
#include <stdio.h>

unsigned mt_ct_locate_chain(void *ctx, uint64_t addr, mt_frame *out, unsigned max)
{
    return mt_locate_all(ctx, addr, out, max);
}

static bool is_plumbing(const mt_plumbing *skip, const mt_frame *f)
{
    return skip && f->function && mt_plumbing_match(skip, f->function);
}

static const char *frame_name(const mt_frame *f, char *buf, size_t n)
{
    if (f->function)
        return f->function;
    if (f->module)
        return mt_frame_group_label(f, MT_GROUP_FUNCTION, buf, n);
    snprintf(buf, n, "0x%" PRIx64, f->address);
    return buf;
}

unsigned mt_ct_path_make(mt_ct_pathbuf *pb, const uint64_t *frames, unsigned n, mt_chain_fn chain,
                         void *ctx, const mt_plumbing *skip, const mt_ct_frame **out)
{
    unsigned k = 0;           /* source frames in pb->fr, innermost first */
    bool seen_caller = false; /* past the plumbing */
    for (unsigned i = 0; i < n && k < MT_CT_MAX_PATH; i++) {
        unsigned base = k, c = chain(ctx, frames[i], pb->fr + base, MT_MAX_CHAIN);
        for (unsigned j = 0; j < c && k < MT_CT_MAX_PATH; j++) {
            if (!seen_caller && is_plumbing(skip, &pb->fr[base + j]))
                continue;
            seen_caller = true;
            pb->fr[k++] = pb->fr[base + j]; /* k <= base + j: compacting in place */
        }
    }
    if (!seen_caller && n) { /* all plumbing: the outermost function, as mt_trace_site */
        unsigned c = chain(ctx, frames[n - 1], pb->fr, MT_MAX_CHAIN);
        pb->fr[0] = pb->fr[c - 1];
        k = 1;
    }
    for (unsigned i = 0; i < k; i++) {
        const mt_frame *f = &pb->fr[k - 1 - i];
        pb->out[i] = (mt_ct_frame){frame_name(f, pb->names[i], sizeof pb->names[i]), f->inlined};
    }
    *out = pb->out;
    return k;
}
