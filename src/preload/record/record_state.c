/* record_state.c -- state sets of a recording (dat_format.h): every
 * trace's counters, and (initial state only) every live block, so that a
 * recording started mid-run replays to the same state as the live view
 * (written from the copy record_initial.c took), and the final counters a
 * reader can check its replay against (from such a copy too, or, if there
 * was no memory for one, read live).
 */
#include "core_clock.h"
#include "dat_format.h"
#include "record_writer.h"
#include "table_trace.h"

#include <string.h>
#include <time.h>

#define ENTRIES_PER_RECORD 4096u
#define ENTRY_BYTES_MAX 100u /* the largest entry: 8 varints of 10 bytes, and room */

_Static_assert(ENTRIES_PER_RECORD <= MT_DAT_ENTRIES_MAX, "a state record within its limit");
_Static_assert(ENTRIES_PER_RECORD *ENTRY_BYTES_MAX <= MT_DAT_RECORD_MAX, "and its bytes");

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

static void trace_entry(batch *bt, uint32_t id, const mt_rr_tcopy *c)
{
    mt_rec_buf *b = &bt->entries;
    mt_put_v(b, id - bt->prev_id);
    mt_put_v(b, c->ac);
    mt_put_v(b, c->ab);
    mt_put_v(b, c->fc);
    mt_put_v(b, c->fb);
    mt_put_v(b, c->tc);
    mt_put_v(b, c->tb);
    mt_put_v(b, c->peak);
    bt->prev_id = id;
    if (++bt->n == ENTRIES_PER_RECORD)
        flush_batch(bt, MT_DAT_REC_TRACE_STATES);
}

static void block_entry(batch *bt, const mt_rr_bcopy *blk)
{
    mt_rec_buf *b = &bt->entries;
    int64_t trace = (int64_t)(blk->key & ((1ull << MT_RR_TRACE_BITS) - 1));
    int64_t birth = (int64_t)(blk->key >> MT_RR_TRACE_BITS);
    mt_put_z(b, trace - bt->prev_trace);
    mt_put_z(b, birth - bt->prev_birth);
    mt_put_v(b, blk->size);
    mt_put_v(b, 1);
    bt->prev_trace = trace;
    bt->prev_birth = birth;
    if (++bt->n == ENTRIES_PER_RECORD)
        flush_batch(bt, MT_DAT_REC_LIVE_BLOCKS);
}

static batch bt; /* writer lock held: one user at a time */

void mt_rr_state_release(void)
{
    mt_rbuf_free(&bt.entries);
}

static batch *begin_set(unsigned kind, uint64_t now)
{
    if (!bt.entries.p && !mt_rbuf_init(&bt.entries, ENTRIES_PER_RECORD * ENTRY_BYTES_MAX))
        return NULL;
    bt.total = 0;
    mt_put_v(&mt_w.pay, kind);
    mt_put_v(&mt_w.pay, now);
    mt_put_v(&mt_w.pay, mt_unix_ns());
    mt_recw_emit(MT_DAT_REC_STATE_BEGIN);
    return &bt;
}

static void end_set(unsigned kind, uint64_t ntraces, uint64_t nlive)
{
    mt_put_v(&mt_w.pay, kind);
    mt_put_v(&mt_w.pay, ntraces);
    mt_put_v(&mt_w.pay, nlive);
    mt_recw_emit(MT_DAT_REC_STATE_END);
    mt_recw_end_frame();
}

void mt_rr_state(unsigned kind, uint64_t now)
{
    batch *bt = begin_set(kind, now);
    if (!bt)
        return;
    uint32_t count = mt_trace_count();
    if (count > mt_w.defs)
        count = mt_w.defs; /* only traces the file defines */
    uint64_t f[MT_DAT_TOTALS_FIELDS];
    memset(f, 0, sizeof f);
    for (uint32_t id = 0; id < count; id++) {
        mt_rr_tcopy c;
        mt_rr_trace_copy(id, &c);
        trace_entry(bt, id, &c);
        mt_rr_totals_add(f, &c); /* the totals of these very reads, not of a second pass */
    }
    flush_batch(bt, MT_DAT_REC_TRACE_STATES);
    mt_rr_totals_live(now, f, count);
    end_set(kind, bt->total, 0);
}

void mt_rr_state_copy(unsigned kind, uint64_t now, const mt_rr_tcopy *tr, uint32_t ntraces,
                      const mt_rr_bcopy *bl, uint64_t nblocks, uint64_t *totals)
{
    batch *bt = begin_set(kind, now);
    if (!bt)
        return;
    if (ntraces > mt_w.defs)
        ntraces = mt_w.defs; /* cannot happen: defined after the copy */
    for (uint32_t id = 0; id < ntraces; id++)
        trace_entry(bt, id, &tr[id]);
    flush_batch(bt, MT_DAT_REC_TRACE_STATES);
    uint64_t ntr = bt->total;
    bt->total = 0;
    for (uint64_t i = 0; i < nblocks; i++)
        if ((bl[i].key & ((1ull << MT_RR_TRACE_BITS) - 1)) < ntraces)
            block_entry(bt, &bl[i]);
    flush_batch(bt, MT_DAT_REC_LIVE_BLOCKS);
    if (totals)
        mt_rr_totals_emit(now, totals);
    end_set(kind, ntr, bt->total);
}
