/* record_state.c -- state sets of a recording (dat_format.h): every
 * trace's counters, and (initial state only) every live block, so that a
 * recording started mid-run replays to the same state as the live view,
 * and the final counters a reader can check its replay against.
 */
#include "dat_format.h"
#include "ptr_table.h"
#include "record_writer.h"
#include "trace_table.h"

#include <time.h>

#define ENTRIES_PER_RECORD 4096u

static uint64_t unix_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Entries are built in a second buffer, counted, then prefixed with n. */
typedef struct {
    mt_rec_buf entries;
    uint32_t n;
    uint64_t total;
    int64_t prev_trace, prev_birth;
    uint32_t prev_id;
} batch;

static void flush_batch(batch *bt, unsigned type)
{
    if (!bt->n)
        return;
    mt_put_v(&mt_w.pay, bt->n);
    mt_put_bytes(&mt_w.pay, bt->entries.p, bt->entries.len);
    mt_recw_emit(type);
    bt->total += bt->n;
    bt->n = 0;
    bt->entries.len = 0;
    bt->prev_trace = bt->prev_birth = 0;
    bt->prev_id = 0;
}

static void trace_entry(batch *bt, uint32_t id)
{
    mt_trace *t = mt_trace_get(id);
    mt_rec_buf *b = &bt->entries;
    uint64_t fc = atomic_load_explicit(&t->free_count, memory_order_acquire);
    uint64_t fb = atomic_load_explicit(&t->free_bytes, memory_order_relaxed);
    uint64_t tc = atomic_load_explicit(&t->temp_count, memory_order_relaxed);
    uint64_t tb = atomic_load_explicit(&t->temp_bytes, memory_order_relaxed);
    uint64_t ac = atomic_load_explicit(&t->alloc_count, memory_order_acquire);
    uint64_t lb = atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
    uint64_t pk = atomic_load_explicit(&t->peak_live_bytes, memory_order_relaxed);
    mt_put_v(b, id - bt->prev_id);
    mt_put_v(b, ac);
    mt_put_v(b, lb + fb);
    mt_put_v(b, fc);
    mt_put_v(b, fb);
    mt_put_v(b, tc);
    mt_put_v(b, tb);
    mt_put_v(b, pk > lb ? pk : lb);
    bt->prev_id = id;
    if (++bt->n == ENTRIES_PER_RECORD)
        flush_batch(bt, MT_DAT_REC_TRACE_STATES);
}

static void live_visit(const mt_block *blk, void *arg)
{
    batch *bt = arg;
    mt_rec_buf *b = &bt->entries;
    int64_t birth = (int64_t)(blk->birth_ns / 1000000u);
    mt_put_z(b, (int64_t)blk->trace - bt->prev_trace);
    mt_put_z(b, birth - bt->prev_birth);
    mt_put_v(b, blk->size);
    mt_put_v(b, 1);
    bt->prev_trace = blk->trace;
    bt->prev_birth = birth;
    if (++bt->n == ENTRIES_PER_RECORD)
        flush_batch(bt, MT_DAT_REC_LIVE_BLOCKS);
}

void mt_rr_state(unsigned kind, uint64_t now, bool live_blocks)
{
    static batch bt; /* writer lock held: one user at a time */
    if (!bt.entries.p && !mt_rbuf_init(&bt.entries, ENTRIES_PER_RECORD * 100u))
        return;
    bt.total = 0;
    mt_put_v(&mt_w.pay, kind);
    mt_put_v(&mt_w.pay, now);
    mt_put_v(&mt_w.pay, unix_now_ns());
    mt_recw_emit(MT_DAT_REC_STATE_BEGIN);
    uint32_t count = mt_trace_count();
    if (count > mt_w.defs)
        count = mt_w.defs; /* only traces the file defines */
    for (uint32_t id = 0; id < count; id++)
        trace_entry(&bt, id);
    flush_batch(&bt, MT_DAT_REC_TRACE_STATES);
    uint64_t ntraces = bt.total;
    bt.total = 0;
    if (live_blocks) {
        mt_ptr_visit(live_visit, &bt);
        flush_batch(&bt, MT_DAT_REC_LIVE_BLOCKS);
    } else {
        mt_rr_totals(now);
    }
    mt_put_v(&mt_w.pay, kind);
    mt_put_v(&mt_w.pay, ntraces);
    mt_put_v(&mt_w.pay, bt.total);
    mt_recw_emit(MT_DAT_REC_STATE_END);
    mt_recw_end_frame();
}
