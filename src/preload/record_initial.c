/* record_initial.c -- the initial state of a recording started mid-run,
 * taken in two steps so that allocation calls wait as little as possible.
 *
 * While the hooks wait at their gate (the pause), mt_rr_capture_take only
 * copies what the INITIAL state set needs -- every trace's counters and
 * every live block's trace, birth millisecond and size -- into memory from
 * mmap (prepared before the pause).  It calls nothing that takes a lock
 * outside memtop (no loader lock, no stdio, no malloc, no I/O): a thread
 * held at the gate may hold any of those.  Encoding, compression and the
 * file writes happen after recording switched on (mt_rr_capture_write).
 *
 * Memory: 56 bytes per trace and 16 per live block, for the few
 * milliseconds between the pause and the end of the write.
 */
#include "os_memory.h"
#include "ptr_table.h"
#include "record_writer.h"
#include "trace_table.h"

typedef struct {
    mt_rr_tcopy *traces;
    mt_rr_bcopy *blocks;
    size_t traces_bytes, blocks_bytes;
    uint32_t traces_cap, ntraces;
    uint64_t blocks_cap, nblocks;
    uint64_t skipped; /* live blocks left out (no room, or a trace born meanwhile) */
    uint64_t t_ns;
} capture;

static capture g_cap; /* writer lock held */

bool mt_rr_capture_prepare(void)
{
    capture *c = &g_cap;
    uint64_t nt = mt_trace_count(), nb = mt_ptr_count();
    /* Room for what threads that were already inside an allocation call
     * (or gave up waiting) may add before the copy. */
    nt += nt / 4 + 4096;
    if (nt > MT_TRACE_MAX)
        nt = MT_TRACE_MAX;
    nb += nb / 4 + 65536;
    c->traces_cap = (uint32_t)nt;
    c->blocks_cap = nb;
    c->traces_bytes = (size_t)nt * sizeof(mt_rr_tcopy);
    c->blocks_bytes = (size_t)nb * sizeof(mt_rr_bcopy);
    c->traces = mt_os_alloc(c->traces_bytes);
    c->blocks = mt_os_alloc(c->blocks_bytes);
    c->ntraces = 0;
    c->nblocks = c->skipped = 0;
    if (c->traces && c->blocks) {
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

static void copy_trace(uint32_t id, mt_rr_tcopy *o)
{
    mt_trace *t = mt_trace_get(id); /* reserved up to MT_TRACE_MAX: readable even if not ready */
    o->fc = atomic_load_explicit(&t->free_count, memory_order_acquire);
    o->fb = atomic_load_explicit(&t->free_bytes, memory_order_relaxed);
    o->tc = atomic_load_explicit(&t->temp_count, memory_order_relaxed);
    o->tb = atomic_load_explicit(&t->temp_bytes, memory_order_relaxed);
    o->ac = atomic_load_explicit(&t->alloc_count, memory_order_acquire);
    uint64_t lb = atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
    uint64_t pk = atomic_load_explicit(&t->peak_live_bytes, memory_order_relaxed);
    o->ab = lb + o->fb;
    o->peak = pk > lb ? pk : lb;
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
        copy_trace(id, &c->traces[id]);
    c->ntraces = n;
    mt_ptr_visit(copy_block, c);
}

uint64_t mt_rr_capture_skipped(void)
{
    return g_cap.skipped;
}

void mt_rr_capture_write(void)
{
    capture *c = &g_cap;
    mt_rr_state_copy(c->t_ns, c->traces, c->ntraces, c->blocks, c->nblocks);
}

void mt_rr_capture_release(void)
{
    capture *c = &g_cap;
    mt_os_free(c->traces, c->traces_bytes);
    mt_os_free(c->blocks, c->blocks_bytes);
    c->traces = NULL;
    c->blocks = NULL;
}
