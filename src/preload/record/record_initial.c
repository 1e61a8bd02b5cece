/* record_initial.c -- copies of the state taken in a pause: the initial
 * state of a recording started mid-run, and the final state of any, taken
 * in two steps so that allocation calls wait as little as possible.
 *
 * While the hooks wait at their gate (the pause), mt_rr_capture_take only
 * copies what the state set needs -- every trace's counters, the totals'
 * process counters and (initial state) every live block's trace, birth
 * millisecond and size -- into memory from mmap (prepared before the
 * pause).  It calls nothing that takes a lock outside memtop (no loader
 * lock, no stdio, no malloc, no I/O): a thread held at the gate may hold
 * any of those.  Encoding, compression and the file writes happen after
 * the pause (mt_rr_capture_write).
 *
 * Memory: 56 bytes per trace and (initial state) 16 per live block, for
 * the few milliseconds between the pause and the end of the write.
 */
#include "alloc_scan.h"
#include "dat_format.h"
#include "core_os_memory.h"
#include "core_sample.h"
#include "table_ptr.h"
#include "record_writer.h"
#include "core_state.h"
#include "table_trace.h"

#include <string.h>

typedef struct {
    mt_rr_tcopy *traces;
    mt_rr_bcopy *blocks;
    size_t traces_bytes, blocks_bytes;
    uint32_t traces_cap, ntraces;
    uint64_t blocks_cap, nblocks;
    uint64_t skipped; /* live blocks left out (no room, or a trace born meanwhile) */
    uint64_t t_ns;
    bool with_blocks;
    uint64_t peak, unknown_free, untracked, missed, threads; /* TOTALS' process counters */
    bool sampled;      /* exact holds the exact counts (sampled mode) */
    mt_exact_totals exact;
} capture;

static capture g_cap; /* writer lock held */

bool mt_rr_capture_prepare(bool blocks)
{
    capture *c = &g_cap;
    uint64_t nt = mt_trace_count(), nb = blocks ? mt_ptr_count() : 0;
    /* Room for what threads that were already inside an allocation call
     * (or gave up waiting) may add before the copy. */
    nt += nt / 4 + 4096;
    if (nt > MT_TRACE_MAX)
        nt = MT_TRACE_MAX;
    nb = blocks ? nb + nb / 4 + 65536 : 0;
    c->with_blocks = blocks;
    c->traces_cap = (uint32_t)nt;
    c->blocks_cap = nb;
    c->traces_bytes = (size_t)nt * sizeof(mt_rr_tcopy);
    c->blocks_bytes = (size_t)nb * sizeof(mt_rr_bcopy);
    c->traces = mt_os_alloc(c->traces_bytes);
    c->blocks = blocks ? mt_os_alloc(c->blocks_bytes) : NULL;
    c->ntraces = 0;
    c->nblocks = c->skipped = 0;
    if (c->traces && (c->blocks || !blocks)) {
        /* Fault the pages in now, not during the pause. */
        for (size_t off = 0; off < c->traces_bytes; off += 4096)
            ((volatile char *)c->traces)[off] = 0;
        for (size_t off = 0; off < c->blocks_bytes; off += 4096)
            ((volatile char *)c->blocks)[off] = 0;
        return true;
    }
    mt_rr_capture_release();
    return false;
}

void mt_rr_trace_copy(uint32_t id, mt_rr_tcopy *o)
{
    mt_trace *t = mt_trace_get(id); /* reserved up to MT_TRACE_MAX: readable even if not ready */
    mt_trace_counts c;
    mt_trace_read(t, &c);
    o->fc = c.free_count;
    o->fb = c.free_bytes;
    o->tc = c.temp_count;
    o->tb = c.temp_bytes;
    o->ac = c.alloc_count;
    o->ab = c.live_bytes + c.free_bytes;
    o->peak = c.peak_live_bytes > c.live_bytes ? c.peak_live_bytes : c.live_bytes;
}

static void copy_block(const mt_block *b, void *arg)
{
    capture *c = arg;
    if (b->trace >= c->ntraces || c->nblocks == c->blocks_cap) {
        c->skipped++;
        return;
    }
    mt_rr_bcopy *o = &c->blocks[c->nblocks++];
    o->key = (b->birth_ns / 1000000u) << MT_RR_TRACE_BITS | b->trace;
    o->size = b->size;
}

void mt_rr_capture_take(void)
{
    capture *c = &g_cap;
    c->t_ns = mt_recw_now();
    uint32_t n = mt_trace_count();
    if (n > c->traces_cap)
        n = c->traces_cap;
    for (uint32_t id = 0; id < n; id++)
        mt_rr_trace_copy(id, &c->traces[id]);
    c->ntraces = n;
    c->peak = atomic_load_explicit(&mt_g.peak_live_bytes, memory_order_relaxed);
    c->unknown_free = atomic_load_explicit(&mt_g.unknown_free_count, memory_order_relaxed);
    c->untracked = atomic_load_explicit(&mt_g.untracked_alloc_count, memory_order_relaxed);
    c->missed = atomic_load_explicit(&mt_g.missed_free_count, memory_order_relaxed);
    c->threads = atomic_load_explicit(&mt_g.thread_count, memory_order_relaxed);
    c->sampled = mt_sample_exact_totals(&c->exact); /* relaxed atomics of thread records */
    if (c->with_blocks)
        mt_ptr_visit(copy_block, c);
}

void mt_rr_capture_sums(uint64_t sums[4])
{
    const capture *c = &g_cap;
    sums[0] = sums[1] = sums[2] = sums[3] = 0;
    for (uint32_t id = 0; id < c->ntraces; id++) {
        sums[0] += c->traces[id].ac;
        sums[1] += c->traces[id].ab;
        sums[2] += c->traces[id].fc;
        sums[3] += c->traces[id].fb;
    }
}

/* The final state's TOTALS from the copy (the fields mt_rr_totals_emit
 * does not read itself). */
static void copy_totals(const capture *c, uint64_t *f)
{
    for (uint32_t id = 0; id < c->ntraces; id++)
        mt_rr_totals_add(f, &c->traces[id]);
    if (c->sampled) { /* as mt_rr_totals_live and the segment's totals */
        f[2] = c->exact.allocs;
        f[3] = c->exact.bytes;
        f[4] = c->exact.frees;
    }
    f[8] = c->peak > f[0] ? c->peak : f[0];
    f[9] = c->unknown_free;
    f[10] = c->untracked;
    f[11] = c->missed;
    f[17] = c->ntraces;
    f[18] = c->threads;
    f[MT_DAT_TOTALS_ALLOC_INEXACT] = mt_alloc_inexact_count();
}

uint64_t mt_rr_capture_skipped(void)
{
    return g_cap.skipped;
}

void mt_rr_capture_write(unsigned kind)
{
    capture *c = &g_cap;
    if (kind == MT_DAT_STATE_INITIAL) {
        mt_rr_state_copy(kind, c->t_ns, c->traces, c->ntraces, c->blocks, c->nblocks, NULL);
        return;
    }
    uint64_t f[MT_DAT_TOTALS_FIELDS];
    memset(f, 0, sizeof f);
    copy_totals(c, f);
    mt_rr_state_copy(kind, c->t_ns, c->traces, c->ntraces, NULL, 0, f);
}

void mt_rr_capture_release(void)
{
    capture *c = &g_cap;
    mt_os_free(c->traces, c->traces_bytes);
    mt_os_free(c->blocks, c->blocks_bytes);
    c->traces = NULL;
    c->blocks = NULL;
}
