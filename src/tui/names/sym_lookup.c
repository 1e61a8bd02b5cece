/* sym_lookup.c -- the background symbolizer's lookups (see sym_worker.h):
 * a short critical section that answers from the records or with module +
 * offset in the latest map, and queues what is missing. */
#include "sym_worker_impl.h"

#include <string.h>

/* addr, a frame of trace (0: any), in the latest map, module + offset only
 * (lock held); false when out of memory. */
static bool locate_now(mt_symworker *w, uint64_t addr, uint32_t trace, mt_frame *out)
{
    mt_locator loc = {&w->cur->map, NULL, NULL, NULL, NULL, trace};
    mt_locate(&loc, addr, out);
    return mt_symw_intern_frame(w, out);
}

/* e's answer can be shown: symbolized, and not a module-less one computed
 * with an older map (lock held). */
static bool answered(const mt_symworker *w, const mt_symw_entry *e)
{
    return e->res && (e->res[0].module || e->mod_gen == w->cur->gen);
}

static void request(mt_symworker *w, mt_symw_entry *e)
{
    if (e->busy)
        return;
    mt_symw_queue_request(&w->queue, e);
    mt_symw_publish_pending(w);
    pthread_cond_signal(&w->wake);
}

static bool same_frames(const mt_symw_entry *e, const uint64_t *frames, unsigned n)
{
    return e->nframes == n && memcmp(e->frames, frames, n * sizeof *frames) == 0;
}

/* The record of trace id with these frames (lock held); NULL when out of
 * memory. */
static mt_symw_entry *trace_entry(mt_symworker *w, uint32_t id, const uint64_t *frames, unsigned n)
{
    mt_symw_entry *e = mt_symw_table_find(&w->table, MT_SYMW_LOCATION, id);
    if (e && same_frames(e, frames, n))
        return e;
    return mt_symw_table_add(&w->table, MT_SYMW_LOCATION, id, frames, n);
}

static bool location_locked(mt_symworker *w, uint32_t id, const uint64_t *frames, unsigned n,
                            mt_frame *out)
{
    if (!w->threaded) {
        mt_locator loc = mt_symbols_locator(&w->syms, &w->cur->map);
        loc.wrappers = &w->wrappers;
        loc.trace = id;
        mt_trace_location(&loc, frames, n, out);
        mt_symw_intern_frame(w, out);
        return true;
    }
    if (!locate_now(w, frames[0], id, out))
        return false;
    if (!out->module)
        return true; /* mt_trace_location's answer when frames[0] has no module */
    mt_symw_entry *e = trace_entry(w, id, frames, n);
    if (e && answered(w, e)) {
        *out = e->res[0];
        if (e->wrap_gen == w->wrap_gen)
            return true;
        request(w, e); /* made with an older wrapper set: shown until made again */
        return false;
    }
    if (e)
        request(w, e);
    return false;
}

bool mt_symworker_location(mt_symworker *w, uint32_t trace_id, const uint64_t *frames, unsigned n,
                           mt_frame *out)
{
    memset(out, 0, sizeof *out);
    if (!w || n == 0)
        return true;
    pthread_mutex_lock(&w->lock);
    bool final = location_locked(w, trace_id, frames, n, out);
    pthread_mutex_unlock(&w->lock);
    return final;
}

/* A MT_SYMW_FRAMES_AT key: addr and the index of its module (user-space
 * addresses are below 2^47; a key two pairs share is told apart by the
 * entry's frames, and the later pair's entry replaces the other's). */
static uint64_t at_key(uint64_t addr, uint64_t module)
{
    return addr ^ (module << 47);
}

/* The record of addr as a frame of trace (lock held): keyed by the address
 * alone when the trace's module there is the default one, else
 * (MT_SYMW_FRAMES_AT) by the address and that module (at_key), its frames
 * the address and a trace with that module; NULL when out of memory. */
static mt_symw_entry *frames_entry(mt_symworker *w, uint64_t addr, uint32_t trace)
{
    const mt_modules *map = &w->cur->map;
    const mt_module_info *m = mt_modules_find_at(map, addr, trace);
    if (!trace || m == mt_modules_find(map, addr)) {
        mt_symw_entry *e = mt_symw_table_find(&w->table, MT_SYMW_FRAMES, addr);
        return e ? e : mt_symw_table_add(&w->table, MT_SYMW_FRAMES, addr, &addr, 1);
    }
    /* Keyed by the address and the module: two traces naming addr from two
     * modules that are not the default one (three lives at one place) would
     * else replace each other's entry at every lookup, never answered. */
    uint64_t k = at_key(addr, (uint64_t)(m - map->items));
    mt_symw_entry *e = mt_symw_table_find(&w->table, MT_SYMW_FRAMES_AT, k);
    if (e && e->frames[0] == addr && mt_modules_find_at(map, addr, (uint32_t)e->frames[1]) == m)
        return e;
    uint64_t frames[2] = {addr, trace};
    return mt_symw_table_add(&w->table, MT_SYMW_FRAMES_AT, k, frames, 2);
}

/* The frames of addr (lock held): out[0] is located already. */
static unsigned frames_locked(mt_symworker *w, uint64_t addr, uint32_t trace, mt_frame *out,
                              unsigned max, bool *final)
{
    *final = !w->threaded || !out->module;
    if (*final)
        return 1; /* what mt_locate_all says without symbols or module */
    mt_symw_entry *e = frames_entry(w, addr, trace);
    /* An answer from another module than the one that holds addr now (a
     * library loaded at the place of the one it was made with) is made
     * again: frames keep their module only through a trace (frames_entry).
     * Another one, not only another path: a plugin rebuilt and loaded
     * again at its place has the path of the life the answer named. */
    const mt_module_info *now = mt_modules_find_at(&w->cur->map, addr, trace);
    if (e && answered(w, e) && e->res[0].module && strcmp(e->res[0].module, out->module) == 0 &&
        now && e->mod_load == now->load_seq) {
        unsigned k = e->nres < max ? e->nres : max;
        memcpy(out, e->res, k * sizeof *out);
        *final = true;
        return k;
    }
    if (e)
        request(w, e);
    return 1;
}

unsigned mt_symworker_frames(mt_symworker *w, uint64_t addr, uint32_t trace, mt_frame *out,
                             unsigned max, bool *final)
{
    *final = true;
    if (max == 0)
        return 0;
    memset(out, 0, sizeof *out);
    out->address = addr;
    if (!w)
        return 1;
    pthread_mutex_lock(&w->lock);
    unsigned k = 1;
    if (locate_now(w, addr, trace, out))
        k = frames_locked(w, addr, trace, out, max, final);
    else
        *final = false;
    pthread_mutex_unlock(&w->lock);
    return k;
}
