/* hook_dl_gone.c -- which modules a dlclose unloaded: those listed before
 * the real dlclose that the loader no longer lists after it, by address
 * range.  The traces with a frame in them are retired
 * (table_trace_index.c, "Retired traces"), so that a library loaded at
 * their place later gets traces of its own, named from it.
 *
 * The dlclose hook's own listing, not the publisher's or the writer's
 * (either may be off, or give up): whatever runs, the dedup must not hand
 * an unloaded library's trace ids to the code that replaces it.  Most
 * dlcloses unload nothing (the library is still referenced): the loader's
 * unload count (dlpi_subs) did not move and the second listing is skipped.
 * The listings are mmap'ed (a dlclose may run on a small stack, and a
 * process may have thousands of modules), for the dlclose's duration.
 */
#define _GNU_SOURCE
#include "hook_dl_gone.h"

#include "core_loader_gate.h"
#include "core_os_memory.h"
#include "publish_modules.h"

#include <link.h>
#include <string.h>

/* Room for modules loaded by other threads between the count and the
 * listing; one loaded after that is missed (not retired: the window of
 * hook_dl.c). */
#define SPARE 16u

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mt_dl_listing *l = arg;
    l->n++;
    l->subs = info->dlpi_subs;
    return 0;
}

static int list_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mt_dl_listing *l = arg;
    l->subs = info->dlpi_subs;
    if (l->n == l->cap)
        return 0;
    mt_code_range *r = &l->r[l->n];
    mt_module_span(info, &r->lo, &r->hi);
    if (r->hi <= r->lo)
        return 0;
    /* its build-id and where it is: whether it is loaded again at its
     * place later (table_trace_places.h) */
    uint32_t len = 0;
    const uint8_t *id = mt_module_build_id(info, &len);
    r->id_at = (uint64_t)(uintptr_t)id;
    r->id_len = id ? len : 0;
    if (id)
        memcpy(r->id, id, len);
    l->n++;
    return 0;
}

static void list_into(mt_dl_listing *l)
{
    l->n = 0;
    mt_loader_iterate(list_one, l);
}

void mt_dl_list(mt_dl_listing *l)
{
    *l = (mt_dl_listing){0};
    mt_loader_iterate(count_one, l);
    l->cap = l->n + SPARE;
    l->r = mt_os_alloc((size_t)l->cap * sizeof *l->r);
    if (l->r)
        list_into(l);
}

static bool listed(const mt_dl_listing *l, mt_code_range r)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->r[i].lo == r.lo && l->r[i].hi == r.hi)
            return true;
    return false;
}

void mt_dl_retire_gone(mt_dl_listing *before)
{
    if (!before->r)
        return;
    mt_dl_listing after = {0};
    mt_loader_iterate(count_one, &after);
    if (after.subs != before->subs) { /* something was unloaded */
        after.cap = after.n + SPARE;
        after.r = mt_os_alloc((size_t)after.cap * sizeof *after.r);
        if (after.r) {
            list_into(&after);
            uint32_t gone = 0; /* compacted in place in before->r */
            for (uint32_t i = 0; i < before->n; i++)
                if (!listed(&after, before->r[i]))
                    before->r[gone++] = before->r[i];
            mt_traces_retire(before->r, gone);
            mt_os_free(after.r, (size_t)after.cap * sizeof *after.r);
        }
    }
    mt_os_free(before->r, (size_t)before->cap * sizeof *before->r);
    before->r = NULL;
}
