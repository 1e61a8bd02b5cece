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
 * process may have thousands of modules).
 *
 * Which traces to look at: a module not in the last dlclose's listing was
 * loaded after it, so every trace taken in it has an id at least the trace
 * count read before that listing (its `since`); a module that was there
 * keeps the `since` it had.  A plugin loaded and unloaded in a loop then
 * costs its dlclose a look at the traces taken in its life, not at all of
 * them (table_trace_index.c mt_traces_retire).  The last listing is kept
 * (g_last: ranges and `since`, in the library's own data, not mmap'ed: a
 * mapping kept across the dlclose could take the unloaded library's hole
 * and move the next library loaded, the same plugin included, elsewhere);
 * a truncated one, or one another thread holds the lock of (a fork
 * child's inherited lock too), is not used: `since` 0, every trace.
 */
#define _GNU_SOURCE
#include "hook_dl_gone.h"

#include "core_loader_gate.h"
#include "core_os_memory.h"
#include "core_spinlock.h"
#include "publish_modules.h"
#include "table_trace.h"

#include <link.h>
#include <string.h>

/* Room for modules loaded by other threads between the count and the
 * listing; one loaded after that is missed (not retired: the window of
 * hook_dl.c). */
#define SPARE 16u

/* The last listing: a dlclose's, after the real one (or before it, when
 * nothing was unloaded): each module's range and since. */
#define LAST_MAX 1024u
static struct {
    mt_spinlock lock;
    bool usable; /* a whole listing is here */
    uint32_t n, count;
    struct {
        uint64_t lo, hi;
        uint32_t since;
    } r[LAST_MAX];
} g_last;

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
    if (l->n == l->cap) {
        l->truncated = true;
        return 0;
    }
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

static const mt_code_range *find(const mt_dl_listing *l, const mt_code_range *r)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->r[i].lo == r->lo && l->r[i].hi == r->hi)
            return &l->r[i];
    return NULL;
}

/* Each module's since: as in prev (a listing before l), or, not there,
 * prev's count; 0 when prev is not usable. */
static void set_since(mt_dl_listing *l, const mt_dl_listing *prev)
{
    bool usable = prev && prev->r && !prev->truncated;
    for (uint32_t i = 0; i < l->n; i++) {
        const mt_code_range *was = usable ? find(prev, &l->r[i]) : NULL;
        l->r[i].since = !usable ? 0 : was ? was->since : prev->count;
    }
}

/* Lists the loaded modules into l, whose room is counted first. */
static void list_into(mt_dl_listing *l)
{
    *l = (mt_dl_listing){0};
    mt_loader_iterate(count_one, l);
    l->cap = l->n + SPARE;
    l->n = 0;
    l->count = mt_trace_count(); /* before the listing: see the top */
    l->r = mt_os_alloc((size_t)l->cap * sizeof *l->r);
    if (l->r)
        mt_loader_iterate(list_one, l);
}

static void drop(mt_dl_listing *l)
{
    if (l->r)
        mt_os_free(l->r, (size_t)l->cap * sizeof *l->r);
    l->r = NULL;
}

/* Each module's since from g_last (under its lock): as there, or, not
 * there, its count; 0 when it is not usable. */
static void since_from_last(mt_dl_listing *l)
{
    for (uint32_t i = 0; i < l->n; i++) {
        mt_code_range *r = &l->r[i];
        r->since = g_last.usable ? g_last.count : 0;
        for (uint32_t k = 0; g_last.usable && k < g_last.n; k++)
            if (g_last.r[k].lo == r->lo && g_last.r[k].hi == r->hi)
                r->since = g_last.r[k].since;
    }
}

void mt_dl_list(mt_dl_listing *l)
{
    list_into(l);
    if (!l->r)
        return;
    if (mt_spin_trylock(&g_last.lock)) {
        since_from_last(l);
        mt_spin_unlock(&g_last.lock);
    } else {
        for (uint32_t i = 0; i < l->n; i++)
            l->r[i].since = 0;
    }
}

/* l becomes the last listing (copied into g_last), and is freed. */
static void keep_last(mt_dl_listing *l)
{
    if (mt_spin_trylock(&g_last.lock)) {
        g_last.usable = !l->truncated && l->n <= LAST_MAX;
        g_last.n = l->n <= LAST_MAX ? l->n : 0;
        g_last.count = l->count;
        for (uint32_t k = 0; k < g_last.n; k++) {
            g_last.r[k].lo = l->r[k].lo;
            g_last.r[k].hi = l->r[k].hi;
            g_last.r[k].since = l->r[k].since;
        }
        mt_spin_unlock(&g_last.lock);
    }
    drop(l);
}

void mt_dl_retire_gone(mt_dl_listing *before)
{
    if (!before->r)
        return;
    mt_dl_listing after = {0};
    mt_loader_iterate(count_one, &after);
    if (after.subs == before->subs) { /* nothing was unloaded */
        keep_last(before);
        return;
    }
    list_into(&after);
    if (!after.r) {
        drop(before);
        return;
    }
    set_since(&after, before); /* loaded meanwhile: before's count */
    uint32_t gone = 0;         /* compacted in place in before->r */
    for (uint32_t i = 0; i < before->n; i++)
        if (!find(&after, &before->r[i]))
            before->r[gone++] = before->r[i];
    mt_traces_retire(before->r, gone);
    drop(before);
    keep_last(&after);
}
