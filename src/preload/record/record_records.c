/* record_records.c -- the records a recording is made of (dat_format.h):
 * process, module map, trace definitions, totals, end (the events:
 * record_events.c).
 * Called by the writer with its lock held; each builds one payload in
 * mt_w.pay and hands it to mt_recw_emit.
 */
#define _GNU_SOURCE
#include "record_cull.h"
#include "alloc_scan.h"
#include "core_clock.h"
#include "dat_format.h"
#include "publish_modules.h"
#include "core_loader_gate.h"
#include "core_allocator_figures.h"
#include "core_procinfo.h"
#include "record.h"
#include "record_buffer.h"
#include "record_writer.h"
#include "core_sample.h"
#include "core_spinlock.h"
#include "core_state.h"
#include "table_trace.h"
#include "core_os_memory.h"
#include "hash_fnv.h"

#include <link.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void mt_rr_process(bool mid_run, bool fork_child, uint64_t now)
{
    mt_rec_buf *b = &mt_w.pay;
    char exe[MT_PATH_MAX], cmdline[MT_CMDLINE_MAX];
    mt_proc_exe(exe, sizeof exe);
    mt_proc_cmdline(cmdline, sizeof cmdline);
    uint64_t unix_now = mt_unix_ns();
    mt_put_v(b, (uint64_t)getpid());
    mt_put_v(b, (uint64_t)getppid());
    mt_put_v(b, (uint64_t)getuid());
    mt_put_v(b, mt_self_start_ticks());
    mt_put_v(b, mt_tracking_start_unix_ns()); /* the segment's: to the ns, not the second */
    mt_put_v(b, now);
    mt_put_v(b, unix_now);
    mt_put_v(b, mt_g.cfg.depth);
    mt_put_v(b, mt_g.cfg.temporary_ns);
    mt_put_v(b, mt_g.cfg.interval_ms);
    mt_put_v(b, (mid_run ? MT_DAT_PROC_MID_RUN : 0u) | (fork_child ? MT_DAT_PROC_FORK_CHILD : 0u));
    mt_put_cstr(b, exe);
    mt_put_cstr(b, cmdline);
    /* appended fields (versions 3 and 4) */
    bool culled = mt_cull_on();
    mt_put_v(b, culled ? MT_DAT_MODE_CULLED : MT_DAT_MODE_FULL);
    mt_put_v(b, culled ? mt_cull_threshold_ms() : 0u);
    mt_put_v(b, culled ? mt_cull_max_blocks() : 0u);
    mt_put_v(b, mt_g.cfg.sample_rate);
    /* version 5's appended field, in every file from version 6 on */
    mt_put_v(b, mt_w.tick_order ? MT_DAT_ORDER_TICK : MT_DAT_ORDER_THREAD);
    mt_recw_emit(MT_DAT_REC_PROCESS);
}

/* --- module map --------------------------------------------------------- */

static mt_recw_module *find_loaded(uint64_t bias, uint64_t start)
{
    for (uint32_t i = 0; i < mt_w.nmodules; i++) {
        mt_recw_module *m = &mt_w.modules[i];
        if (m->loaded && m->bias == bias && m->start == start)
            return m;
    }
    return NULL;
}

/* next_trace (appended field): the next trace id, read after the listing
 * that found the module gone, so above every trace into it; 0 when not
 * known (another module found at its place in the same listing: that one's
 * traces may be older than the listing). */
static void emit_unload(mt_recw_module *m, uint64_t now, uint32_t next_trace)
{
    m->loaded = false;
    mt_put_v(&mt_w.pay, m->index);
    mt_put_v(&mt_w.pay, now);
    mt_put_v(&mt_w.pay, next_trace);
    mt_recw_emit(MT_DAT_REC_MODULE_UNLOAD);
}

static void emit_module(const mt_shm_module *rec, uint32_t index, uint64_t now)
{
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, index);
    mt_put_v(b, now);
    mt_put_v(b, rec->bias);
    mt_put_v(b, rec->start);
    mt_put_v(b, rec->end);
    mt_put_s(b, rec->build_id, rec->build_id_len <= MT_BUILD_ID_MAX ? rec->build_id_len : 0);
    mt_put_cstr(b, rec->path);
    mt_recw_emit(MT_DAT_REC_MODULE);
}

/* A slot for a new module: an unloaded module's (its UNLOAD is written),
 * else a fresh one; NULL if every slot holds a loaded module. */
static mt_recw_module *free_slot(void)
{
    for (uint32_t i = 0; i < mt_w.nmodules; i++)
        if (!mt_w.modules[i].loaded)
            return &mt_w.modules[i];
    return mt_w.nmodules < MT_RECW_MODULES_MAX ? &mt_w.modules[mt_w.nmodules++] : NULL;
}

/* The largest MODULE and MODULE_UNLOAD payloads (emit_module: five
 * varints, a build id and a path with their lengths). */
#define MT_RR_MODULE_MAX (5 * 10 + 10 + MT_BUILD_ID_MAX + 10 + MT_PATH_MAX)
#define MT_RR_UNLOAD_MAX (3 * 10)

/* Without I/O (mt_w.no_io), a record is written only if `out` has room;
 * a module left out is listed by the next pass, which walks the modules
 * again although the loader's counters did not move. */
static bool can_emit(size_t payload_max)
{
    if (!mt_w.no_io || mt_recw_room(payload_max))
        return true;
    mt_w.modscan.adds = ~0ull; /* no count the loader gives: the next walk is not skipped */
    return false;
}

static void visit(const mt_shm_module *rec, uint64_t ident, void *arg)
{
    uint64_t now = *(const uint64_t *)arg;
    mt_recw_module *m = find_loaded(rec->bias, rec->start);
    if (m && m->ident != ident) { /* another library where one was: that one is gone */
        if (!can_emit(MT_RR_UNLOAD_MAX + MT_RR_MODULE_MAX))
            return;
        emit_unload(m, now, 0);
        m = NULL;
    }
    if (!m && can_emit(MT_RR_MODULE_MAX) && (m = free_slot()) != NULL) {
        m->bias = rec->bias;
        m->start = rec->start;
        m->ident = ident;
        m->index = mt_w.module_records++;
        m->loaded = true;
        emit_module(rec, m->index, now);
    }
    if (m)
        m->seen = mt_w.modscan.scan;
}

void mt_rr_modules(uint64_t now)
{
    if (!mt_module_scan_run(&mt_w.modscan, mt_loader_iterate, visit, &now))
        return;
    uint32_t next_trace = mt_trace_count(); /* after the walk: above every trace into them */
    for (uint32_t i = 0; i < mt_w.nmodules; i++) {
        mt_recw_module *m = &mt_w.modules[i];
        if (m->loaded && m->seen != mt_w.modscan.scan && can_emit(MT_RR_UNLOAD_MAX))
            emit_unload(m, now, next_trace);
    }
}

/* --- trace definitions -------------------------------------------------- */

static void emit_def(uint32_t id, const mt_trace_def *t)
{
    mt_rec_buf *b = &mt_w.pay;
    const uint64_t *frames = mt_trace_def_frames(t);
    uint32_t n = t->nframes;
    mt_put_v(b, id);
    mt_put_v(b, t->flags);
    mt_put_v(b, t->first_seen_ns);
    mt_put_v(b, t->hash);
    mt_put_v(b, n);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0)
            mt_put_v(b, frames[0]);
        else
            mt_put_z(b, (int64_t)(frames[i] - prev));
        prev = frames[i];
    }
    mt_recw_emit(MT_DAT_REC_TRACE);
}

/* Defines every trace handed out so far, in id order.  A trace being
 * created on another thread is waited for (it is ready within its
 * creator's shard lock): an event may refer to a later id.
 * The modules first, listed after the count was read: a library loaded
 * after the pass's listing (or after the last drain's) and allocated from
 * would else have its traces defined before its MODULE.  Each of these
 * traces' frames was taken before its id, so its module is listed here,
 * or, unloaded meanwhile, was listed by its dlclose under mt_w.lock
 * (record_thread.c mt_rec_dlclose_modules).  Not during a pause, which must
 * not take the loader's lock (record_session.c; no definition is made in
 * one). */
void mt_rr_defs(void)
{
    uint32_t count = mt_trace_count();
    if (mt_w.defs < count && !mt_rec_paused())
        mt_rr_modules(mt_recw_now());
    while (mt_w.defs < count) {
        mt_trace *t = mt_trace_get(mt_w.defs);
        for (unsigned spins = 0; !mt_trace_ready(t);)
            mt_spin_wait(spins++); /* naps: the creator may be of lower priority */
        emit_def(mt_w.defs, mt_trace_def_get(mt_w.defs));
        mt_w.defs++;
    }
}

/* --- allocators ---------------------------------------------------------- */

/* The list copied out (lock held: one writer; 4 KB, not on the stack). */
static mt_shm_allocators allocs_copy;

/* What an ALLOCATORS record says of the list, hashed: a record is written
 * when it changes (never 0: 0 is "none written this session"). */
static uint64_t allocs_hash(const mt_shm_allocators *a)
{
    uint64_t h = mt_fnv_bytes(MT_FNV_SEED, &a->count, sizeof a->count);
    h = mt_fnv_bytes(h, &a->inexact, sizeof a->inexact);
    h = mt_fnv_bytes(h, &a->more, sizeof a->more);
    for (uint32_t i = 0; i < a->count; i++) {
        const mt_shm_allocator *e = &a->a[i];
        h = mt_fnv_bytes(h, &e->kind, sizeof e->kind);
        h = mt_fnv_bytes(h, &e->flags, sizeof e->flags);
        h = mt_fnv_str(mt_fnv_str(h, e->prefix), e->version);
        h = mt_fnv_str(mt_fnv_str(h, e->module), e->note);
    }
    return h | 1u;
}

void mt_rr_allocators(uint64_t now)
{
    mt_shm_allocators *a = &allocs_copy;
    if (!mt_alloc_found_copy(a) || (!a->count && !a->more))
        return; /* busy (next time), or nothing found yet */
    if (a->count > MT_ALLOC_MAX)
        a->count = MT_ALLOC_MAX;
    uint64_t h = allocs_hash(a);
    if (h == mt_w.allocs_hash)
        return;
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, now);
    mt_put_v(b, a->count);
    mt_put_v(b, a->inexact);
    mt_put_v(b, a->more);
    for (uint32_t i = 0; i < a->count; i++) {
        const mt_shm_allocator *e = &a->a[i];
        mt_put_v(b, e->kind);
        mt_put_v(b, e->flags);
        mt_put_s(b, e->prefix, strnlen(e->prefix, sizeof e->prefix));
        mt_put_s(b, e->version, strnlen(e->version, sizeof e->version));
        mt_put_s(b, e->module, strnlen(e->module, sizeof e->module));
        mt_put_s(b, e->note, strnlen(e->note, sizeof e->note));
    }
    mt_recw_emit(MT_DAT_REC_ALLOCATORS);
    mt_w.allocs_hash = h;
}

/* --- totals and end ----------------------------------------------------- */

void mt_rr_totals_add(uint64_t *f, const mt_rr_tcopy *t)
{
    f[0] += t->ab - t->fb;
    f[1] += t->ac - t->fc;
    f[2] += t->ac;
    f[3] += t->ab;
    f[4] += t->fc;
    f[5] += t->fb;
    f[6] += t->tc;
    f[7] += t->tb;
}

void mt_rr_totals_live(uint64_t now, uint64_t *f, uint32_t count)
{
    f[8] = atomic_load_explicit(&mt_g.peak_live_bytes, memory_order_relaxed);
    if (f[8] < f[0])
        f[8] = f[0];
    f[9] = atomic_load_explicit(&mt_g.unknown_free_count, memory_order_relaxed);
    f[10] = atomic_load_explicit(&mt_g.untracked_alloc_count, memory_order_relaxed);
    f[11] = atomic_load_explicit(&mt_g.missed_free_count, memory_order_relaxed);
    f[12] = 0; /* dropped_traces: a property of the segment, not of the recording */
    mt_exact_totals ex;
    if (mt_sample_exact_totals(&ex)) { /* sampled: as the segment's totals (publish_snapshot.c) */
        f[2] = ex.allocs;
        f[3] = ex.bytes;
        f[4] = ex.frees;
    }
    f[17] = count;
    f[18] = atomic_load_explicit(&mt_g.thread_count, memory_order_relaxed);
    f[MT_DAT_TOTALS_ALLOC_INEXACT] = mt_alloc_inexact_count();
    mt_rr_totals_emit(now, f);
}

void mt_rr_totals(uint64_t now)
{
    uint64_t f[MT_DAT_TOTALS_FIELDS];
    memset(f, 0, sizeof f);
    uint32_t count = mt_trace_count();
    for (uint32_t i = 0; i < count; i++) {
        mt_rr_tcopy c;
        mt_rr_trace_copy(i, &c);
        mt_rr_totals_add(f, &c);
    }
    mt_rr_totals_live(now, f, count);
}

void mt_rr_totals_emit(uint64_t now, uint64_t *f)
{
    uint64_t at;
    mt_allocator_bytes(&f[13], &f[14], &at);
    f[MT_DAT_TOTALS_ALLOCATOR_AGE] = now > at ? (now - at) / 1000000u : 0;
    f[15] = mt_proc_rss_bytes();
    f[16] = mt_os_bytes();
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, now);
    mt_put_v(b, mt_unix_ns());
    mt_put_v(b, MT_DAT_TOTALS_FIELDS);
    for (unsigned i = 0; i < MT_DAT_TOTALS_FIELDS; i++)
        mt_put_v(b, f[i]);
    mt_put_v(b, atomic_load_explicit(&mt_w.events, memory_order_relaxed));
    mt_put_v(b, atomic_load_explicit(&mt_w.dropped, memory_order_relaxed));
    mt_recw_emit(MT_DAT_REC_TOTALS);
}

void mt_rr_end(unsigned reason, int error, uint64_t now)
{
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, now);
    mt_put_v(b, mt_unix_ns());
    mt_put_v(b, reason);
    mt_put_v(b, (uint64_t)error);
    mt_put_v(b, atomic_load_explicit(&mt_w.events, memory_order_relaxed));
    mt_put_v(b, atomic_load_explicit(&mt_w.dropped, memory_order_relaxed));
    mt_recw_emit(MT_DAT_REC_END);
}
