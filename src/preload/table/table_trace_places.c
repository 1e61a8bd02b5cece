/* table_trace_places.c -- the history of the places dlclose unloaded
 * modules from (table_trace_places.h).
 *
 * A retired trace (table_trace_index.c) may be taken again when the
 * library it was taken in is loaded again at its place: a plugin run
 * thousands of times would otherwise get new trace ids at each life (and
 * each dlclose would scan more traces).  Viewers name a trace's frame from
 * the module, of those that held its address, with the smallest unload
 * stamp above the trace's id (shm-protocol.md, "Modules"), so the trace
 * may be given back when the module now at its frames is the same build
 * as that one.  Each entry is a run of unloads of one build (build-id at
 * one address, one range) at one place: the traces with ids in [stamp_lo,
 * stamp_hi) whose frames are there were taken in that build.  A plugin
 * loaded and unloaded in a loop is one entry for good; another build
 * loaded at the place begins an entry of its own.  At most MAX_PLACES
 * entries: a forgotten one's ids are never given back (forgot_hi).
 *
 * The lock: taken by the dlclose hook (mt_places_add, holding no other),
 * and by the trace index's locked path under a shard lock
 * (mt_places_same), so after the shard locks in fork's order.
 */
#define _GNU_SOURCE
#include "table_trace_places.h"

#include "core_os_memory.h"
#include "core_spinlock.h"

#include <string.h>

#define MAX_PLACES 64u

typedef struct {
    mt_code_range m;
    uint32_t stamp_lo, stamp_hi;
} place;

static mt_spinlock g_lock;
static uint32_t g_given_back[MT_PLACES_GIVEN_BACK], g_ngiven_back;
static bool g_given_back_lost; /* some not kept: retirements look at all, for good */
static place g_places[MAX_PLACES];
static uint32_t g_added;     /* entries ever made; the newest is g_added - 1 */
static uint32_t g_forgot_hi; /* the highest stamp_hi of a forgotten entry */
static _Atomic bool g_any;

static place *nth(uint32_t i)
{
    return &g_places[i % MAX_PLACES];
}

static uint32_t kept(void)
{
    return g_added < MAX_PLACES ? g_added : MAX_PLACES;
}

static bool overlap(const mt_code_range *a, const mt_code_range *b)
{
    return a->lo < b->hi && b->lo < a->hi;
}

static bool same_build(const mt_code_range *a, const mt_code_range *b)
{
    return a->lo == b->lo && a->hi == b->hi && a->id_at == b->id_at && a->id_len &&
           a->id_len == b->id_len && memcmp(a->id, b->id, a->id_len) == 0;
}

/* The newest entry overlapping g, or NULL. */
static place *newest_at(const mt_code_range *g)
{
    for (uint32_t k = 0; k < kept(); k++) {
        place *p = nth(g_added - 1 - k);
        if (overlap(&p->m, g))
            return p;
    }
    return NULL;
}

static void add_one(const mt_code_range *g, uint32_t stamp)
{
    place *prev = newest_at(g);
    if (prev && same_build(&prev->m, g)) {
        prev->stamp_hi = stamp; /* the same build unloaded again: its run goes on */
        return;
    }
    uint32_t lo = prev ? prev->stamp_hi : 0;
    if (g_added >= MAX_PLACES) { /* the oldest is forgotten */
        place *old = nth(g_added);
        g_forgot_hi = old->stamp_hi > g_forgot_hi ? old->stamp_hi : g_forgot_hi;
    }
    lo = lo > g_forgot_hi ? lo : g_forgot_hi;
    *nth(g_added++) = (place){*g, lo, stamp};
}

void mt_places_add(const mt_code_range *gone, uint32_t n, uint32_t stamp)
{
    mt_spin_lock(&g_lock);
    for (uint32_t i = 0; i < n; i++)
        add_one(&gone[i], stamp);
    if (n)
        atomic_store_explicit(&g_any, true, memory_order_relaxed);
    mt_spin_unlock(&g_lock);
}

bool mt_places_any(void)
{
    return atomic_load_explicit(&g_any, memory_order_relaxed);
}

/* Whether the build-id of entry p is at its address now. */
static bool still_there(const place *p)
{
    uint8_t now[MT_BUILD_ID_MAX];
    long got = mt_os_read_self(now, (uintptr_t)p->m.id_at, p->m.id_len);
    return got == (long)p->m.id_len && memcmp(now, p->m.id, p->m.id_len) == 0;
}

/* 1: frame f of trace id is at a noted place whose build is there again;
 * 0: at no noted place; -1: cannot be told, or another build is there. */
static int frame_same(uint32_t id, uint64_t f, const place **checked)
{
    bool noted = false;
    for (uint32_t k = 0; k < kept(); k++) {
        const place *p = nth(g_added - 1 - k);
        if (f - p->m.lo >= p->m.hi - p->m.lo)
            continue;
        noted = true;
        if (id < p->stamp_lo || id >= p->stamp_hi)
            continue;
        if (p == *checked)
            return 1;
        if (!p->m.id_len || !still_there(p))
            return -1;
        *checked = p;
        return 1;
    }
    return noted ? -1 : 0;
}

bool mt_places_same(uint32_t id, const uint64_t *frames, uint32_t n)
{
    const place *checked = NULL;
    int found = 0;
    mt_spin_lock(&g_lock);
    /* Older than a forgotten entry's stamp: a frame at that place would be
     * at no noted place (0, as in code never unloaded) while another build
     * may be there now, so the trace is never given back. */
    if (id < g_forgot_hi)
        found = -1;
    for (uint32_t i = 0; i < n && found >= 0; i++) {
        int r = frame_same(id, frames[i], &checked);
        found = r < 0 ? -1 : found | r;
    }
    mt_spin_unlock(&g_lock);
    return found > 0;
}

void mt_places_given_back(uint32_t id)
{
    mt_spin_lock(&g_lock);
    uint32_t i = 0; /* noted once: kept until retired (mt_places_prune_given_back) */
    while (i < g_ngiven_back && g_given_back[i] != id)
        i++;
    bool new_one = i == g_ngiven_back;
    if (new_one && i < MT_PLACES_GIVEN_BACK)
        g_given_back[g_ngiven_back++] = id;
    else if (new_one)
        g_given_back_lost = true;
    mt_spin_unlock(&g_lock);
}

uint32_t mt_places_read_given_back(uint32_t *ids, bool *all)
{
    mt_spin_lock(&g_lock);
    uint32_t n = g_ngiven_back;
    memcpy(ids, g_given_back, n * sizeof *ids);
    *all = g_given_back_lost;
    mt_spin_unlock(&g_lock);
    return n;
}

void mt_places_prune_given_back(bool (*live)(uint32_t id))
{
    mt_spin_lock(&g_lock);
    uint32_t n = 0;
    for (uint32_t i = 0; i < g_ngiven_back; i++)
        if (live(g_given_back[i]))
            g_given_back[n++] = g_given_back[i];
    g_ngiven_back = n;
    mt_spin_unlock(&g_lock);
}

void mt_places_lock(void)
{
    mt_spin_lock(&g_lock);
}

void mt_places_unlock(void)
{
    mt_spin_unlock(&g_lock);
}
