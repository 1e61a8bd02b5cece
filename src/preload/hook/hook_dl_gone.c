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
 * unload count (dlpi_subs, read from its first module) did not move and
 * the second listing is skipped.  A listing is one pass of the loader's
 * list, into room for the loader's own count of modules (dlpi_adds -
 * dlpi_subs), not a count and a pass.  The listings are mmap'ed (a dlclose
 * may run on a small stack, and a process may have thousands of modules).
 *
 * Which traces to look at: a module not in the last dlclose's listing was
 * loaded after it, so every trace taken in it has an id at least the trace
 * count read before that listing (its `since`); a module that was there
 * keeps the `since` it had.  A plugin loaded and unloaded in a loop then
 * costs its dlclose a look at the traces taken in its life, not at all of
 * them (table_trace_index.c mt_traces_retire).  The last listing is kept
 * (g_last: ranges and `since`, in the library's own data, not mmap'ed: a
 * mapping made after the real dlclose and kept could take the unloaded
 * library's hole and move the next library loaded, the same plugin
 * included, elsewhere; beyond LAST_MIN modules, a mapping made before it,
 * at each doubling); a truncated one, or one another thread holds the
 * lock of (a fork child's inherited lock too), is not used: `since` 0,
 * every trace.  Listings are compared in the loader's order (find_at):
 * O(modules) when they differ by a module or two, not O(modules^2).
 */
#define _GNU_SOURCE
#include "hook_dl_gone.h"

#include "core_loader_gate.h"
#include "core_os_memory.h"
#include "core_spinlock.h"
#include "publish_modules.h"
#include "table_trace.h"

#include <link.h>
#include <stddef.h>
#include <string.h>

/* Room for modules loaded by other threads between the count and the
 * listing; one loaded after that is missed (not retired: the window of
 * hook_dl.c). */
#define SPARE 16u

/* A count of modules above this is not believed (dlpi_adds - dlpi_subs
 * with dlmopen's namespaces is not one): the modules are counted. */
#define GUESS_MAX 65536u

/* The last listing: a dlclose's, after the real one (or before it, when
 * nothing was unloaded): each module's range and since, in the loader's
 * order.  Up to LAST_MIN modules in the library's data (see the top); more
 * in a mapping made by mt_dl_list, before a real dlclose (so not in the
 * hole of a module it unloads), for twice the modules then, kept. */
#define LAST_MIN 1024u
typedef struct {
    uint64_t lo, hi;
    uint32_t since;
} last_range;
static last_range g_first[LAST_MIN];
static struct {
    mt_spinlock lock;
    bool usable; /* a whole listing is here */
    uint32_t n, count, cap;
    last_range *r; /* g_first, or a mapping of cap */
} g_last = {.cap = LAST_MIN, .r = g_first};

/* The loader's load and unload counts into l, from its first module. */
static void peek(mt_dl_listing *l)
{
    unsigned long long c[2] = {l->adds, l->subs};
    mt_loader_iterate(mt_module_peek_counts, c);
    l->adds = c[0];
    l->subs = c[1];
}

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)info;
    ((mt_dl_listing *)arg)->n++;
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

/* Where the module of range [lo, hi) is among n entries `stride` bytes
 * apart, each starting with a range (mt_code_range, last_range): its
 * index, or n.  Listings keep the loader's order (a module loaded later
 * comes after the others of its namespace), so the entry after the last
 * one found (*at) is tried first: two listings that differ by k modules
 * are compared in O(n + k n), not O(n^2). */
static uint32_t find_at(const void *base, size_t stride, uint32_t n, uint64_t lo, uint64_t hi,
                        uint32_t *at)
{
    for (uint32_t j = 0; j < n; j++) {
        uint32_t i = *at + j < n ? *at + j : *at + j - n;
        const uint64_t *r = (const uint64_t *)(const void *)((const char *)base + i * stride);
        if (r[0] == lo && r[1] == hi) {
            *at = i + 1 < n ? i + 1 : 0;
            return i;
        }
    }
    return n;
}
_Static_assert(offsetof(mt_code_range, lo) == 0 && offsetof(mt_code_range, hi) == 8 &&
                   offsetof(last_range, lo) == 0 && offsetof(last_range, hi) == 8,
               "find_at reads a range at the start of an entry");

/* Each module's since in l from an earlier listing of n entries (at
 * base, stride bytes apart, as find_at reads them, each with its since
 * at since_at bytes in): its since there, or, not there, that listing's
 * count; 0 for every module when that listing is not usable. */
static void since_from(mt_dl_listing *l, const void *base, size_t stride, size_t since_at,
                       uint32_t n, uint32_t count, bool usable)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        mt_code_range *r = &l->r[i];
        uint32_t k = usable ? find_at(base, stride, n, r->lo, r->hi, &at) : n, since = count;
        if (k < n)
            memcpy(&since, (const char *)base + k * stride + since_at, sizeof since);
        r->since = usable ? since : 0;
    }
}

/* Each module's since: as in prev (a listing before l), or, not there,
 * prev's count; 0 when prev is not usable. */
static void set_since(mt_dl_listing *l, const mt_dl_listing *prev)
{
    bool usable = prev && prev->r && !prev->truncated;
    since_from(l, usable ? prev->r : NULL, sizeof *prev->r, offsetof(mt_code_range, since),
               usable ? prev->n : 0, usable ? prev->count : 0, usable);
}

static void drop(mt_dl_listing *l)
{
    if (l->r)
        mt_os_free(l->r, (size_t)l->cap * sizeof *l->r);
    l->r = NULL;
}

/* One pass of the loader's list into l, with room for n modules and
 * SPARE; l->r is NULL when no memory could be had. */
static void list_pass(mt_dl_listing *l, uint32_t n)
{
    l->cap = n + SPARE;
    l->n = 0;
    l->truncated = false;
    l->count = mt_trace_count(); /* before the listing: see the top */
    l->r = mt_os_alloc((size_t)l->cap * sizeof *l->r);
    if (l->r)
        mt_loader_iterate(list_one, l);
}

static uint32_t count_all(void)
{
    mt_dl_listing c = {0};
    mt_loader_iterate(count_one, &c);
    return c.n;
}

/* Lists the loaded modules into l, in one pass: its room is the loader's
 * count of modules (loads - unloads, read from its first one), or, when
 * that count is off, a count of its own. */
static void list_into(mt_dl_listing *l)
{
    *l = (mt_dl_listing){0};
    peek(l);
    uint64_t guess = l->adds - l->subs;
    bool believed = guess <= GUESS_MAX;
    list_pass(l, believed ? (uint32_t)guess : count_all());
    if (l->r && l->truncated && believed) { /* the loader's count was off */
        drop(l);
        list_pass(l, count_all());
    }
}

/* Room in g_last (under its lock) for the n modules listed before a real
 * dlclose and some loaded meanwhile: a mapping of twice that, made now
 * (see LAST_MIN), when the one there is short of it. */
static void last_room(uint32_t n)
{
    if (n + SPARE <= g_last.cap)
        return;
    uint32_t cap = 2 * (n + SPARE);
    last_range *r = mt_os_alloc((size_t)cap * sizeof *r);
    if (!r)
        return; /* the listing is not kept: since 0 */
    memcpy(r, g_last.r, (size_t)g_last.n * sizeof *r);
    if (g_last.r != g_first)
        mt_os_free(g_last.r, (size_t)g_last.cap * sizeof *r);
    g_last.r = r;
    g_last.cap = cap;
}

void mt_dl_list(mt_dl_listing *l)
{
    list_into(l);
    if (!l->r)
        return;
    if (mt_spin_trylock(&g_last.lock)) {
        since_from(l, g_last.r, sizeof *g_last.r, offsetof(last_range, since), g_last.n,
                   g_last.count, g_last.usable);
        last_room(l->n);
        mt_spin_unlock(&g_last.lock);
    } else {
        since_from(l, NULL, 0, 0, 0, 0, false); /* g_last busy: not known */
    }
}

/* l becomes the last listing (copied into g_last), and is freed. */
static void keep_last(mt_dl_listing *l)
{
    if (mt_spin_trylock(&g_last.lock)) {
        g_last.usable = !l->truncated && l->n <= g_last.cap;
        g_last.n = l->n <= g_last.cap ? l->n : 0;
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
    peek(&after);                     /* one module: the counts */
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
    uint32_t gone = 0, at = 0; /* compacted in place in before->r */
    for (uint32_t i = 0; i < before->n; i++)
        if (find_at(after.r, sizeof *after.r, after.n, before->r[i].lo, before->r[i].hi, &at) ==
            after.n)
            before->r[gone++] = before->r[i];
    mt_traces_retire(before->r, gone);
    drop(before);
    keep_last(&after);
}
