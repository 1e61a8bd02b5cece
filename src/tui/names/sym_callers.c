/* sym_callers.c -- a trace's callers past its location from the background
 * symbolizer, for the viewer's rows that share a location (see
 * mt_symworker_callers in sym_worker.h, caller_labels.h). */
#include <string.h>

#include "sym_worker_impl.h"

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Where the location site is in frames: frames[*at], source frame *inner
 * of its chain; false while that chain is not symbolized yet. */
static bool find_site(mt_symworker *w, uint32_t id, const uint64_t *frames, unsigned n,
                      const mt_frame *site, unsigned *at, unsigned *inner)
{
    mt_frame chain[MT_MAX_CHAIN];
    for (unsigned i = 0; i < n; i++) {
        if (frames[i] != site->address)
            continue;
        bool final;
        unsigned c = mt_symworker_frames(w, frames[i], id, chain, MT_MAX_CHAIN, &final);
        for (unsigned j = 0; final && j < c; j++) {
            if (same_str(chain[j].function, site->function) && chain[j].line == site->line &&
                same_str(chain[j].file, site->file)) {
                *at = i;
                *inner = j;
                return true;
            }
        }
        return false; /* the first frame at that address is the site's */
    }
    return false;
}

unsigned mt_symworker_callers(mt_symworker *w, uint32_t trace_id, const uint64_t *frames,
                              unsigned n, char (*out)[MT_CALLER_MAX], unsigned max)
{
    mt_frame site, chain[MT_MAX_CHAIN];
    unsigned at, inner, k = 0;
    if (!w || !n || !mt_symworker_location(w, trace_id, frames, n, &site) ||
        !find_site(w, trace_id, frames, n, &site, &at, &inner))
        return 0;
    /* The plumbing list is immutable once the worker runs; the shape rule's
     * wrappers are the thread's: a caller is seldom one (they are callees). */
    mt_locator skip = {NULL, NULL, NULL, &w->syms.skip, NULL, 0};
    for (unsigned i = at; i < n && k < max; i++) {
        bool final;
        unsigned c = mt_symworker_frames(w, frames[i], trace_id, chain, MT_MAX_CHAIN, &final);
        for (unsigned j = i == at ? inner + 1 : 0; j < c && k < max; j++)
            if (!mt_frame_is_plumbing(&skip, frames[i], &chain[j]))
                mt_frame_short(&chain[j], out[k++], MT_CALLER_MAX);
    }
    return k;
}
