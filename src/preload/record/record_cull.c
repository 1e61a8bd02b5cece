/* record_cull.c -- culled recordings (record_cull.h): the young blocks
 * and the per-trace counts of the blocks culled.
 *
 * Young blocks: a FIFO (ring of entries in the order the writer drained
 * their allocations) and an open-addressing index from address to FIFO
 * position (linear probing, deletion by backward shift: no tombstones).
 * A free whose address holds a young block with exactly its trace, size
 * and birth either culls it (lifetime below the threshold: both events
 * are counted, neither is written) or writes its allocation first (it
 * outlived the threshold but the writer had not expired it yet).  An
 * allocation at an address that still holds a young block (its free is in
 * another thread's ring, or was dropped) writes the old block first.  So
 * every allocation is written exactly once or culled together with its
 * free: per-trace totals stay exact.
 *
 * Writer thread, mt_w.lock held.  Memory: mmap (mt_os_*).
 */
#define _GNU_SOURCE
#include "record_cull.h"

#include "core_os_memory.h"
#include "dat_format.h"
#include "record_writer.h"
#include "table_trace.h"

#include <string.h>
#include <sys/mman.h>

typedef struct young {
    mt_rec_event e;
    uint32_t tid;
    uint32_t live;
} young;

/* Culled counts of one trace since the last CULLED record. */
typedef struct delta {
    uint64_t count, bytes, tcount, tbytes;
} delta;

static struct {
    bool cfg_on;      /* the next session: culled, */
    uint64_t cfg_thr; /* with this threshold (ms) */
    uint32_t cfg_max; /* and this bound */
    bool active;      /* this session is culled */
    uint64_t thr_ms;  /* its lifetime threshold */
    uint32_t max;     /* its FIFO capacity */
    young *fifo;      /* [max] */
    uint32_t *index;  /* [mask + 1]: FIFO position + 1, 0 empty */
    uint32_t mask;
    uint64_t head, tail; /* FIFO sequence numbers */
    uint64_t nlive;
    delta *deltas;          /* [MT_TRACE_MAX], reserved */
    uint64_t *dirty;        /* bitmap of the traces with deltas, reserved */
    uint32_t ndirty;        /* bits set */
    uint32_t max_dirty;     /* the highest id set */
    uint64_t early, culled; /* written early (bound / reuse), culled blocks */
    size_t fifo_bytes, index_bytes;
} g = {.cfg_thr = MT_DAT_CULL_MS_DEFAULT, .cfg_max = MT_CULL_BLOCKS_DEFAULT};

void mt_cull_configure(bool on, uint64_t threshold_ms, uint32_t max_blocks)
{
    g.cfg_on = on;
    g.cfg_thr = threshold_ms;
    g.cfg_max = max_blocks < MT_CULL_BLOCKS_MIN ? MT_CULL_BLOCKS_MIN : max_blocks;
}

bool mt_cull_on(void)
{
    return g.active;
}

uint64_t mt_cull_threshold_ms(void)
{
    return g.thr_ms;
}

uint32_t mt_cull_max_blocks(void)
{
    return g.max;
}

static void release(void)
{
    young *fifo = g.fifo;
    uint32_t *index = g.index;
    g.fifo = NULL; /* first, as mt_rbuf_free */
    g.index = NULL;
    mt_os_free(fifo, g.fifo_bytes); /* NULL: nothing */
    mt_os_free(index, g.index_bytes);
}

void mt_cull_release(void)
{
    release();
    g.active = false;
    /* The deltas' and the bitmap's touched pages back; they read as zeros
     * again, as clear_dirty leaves them (a session ends with its deltas
     * written). */
    if (g.deltas)
        madvise(g.deltas, (size_t)MT_TRACE_MAX * sizeof(delta), MADV_DONTNEED);
    if (g.dirty)
        madvise(g.dirty, (size_t)MT_TRACE_MAX / 8u, MADV_DONTNEED);
    g.ndirty = g.max_dirty = 0;
}

/* Forgets the deltas not written (a fork child's copy of its parent's). */
static void clear_dirty(void)
{
    for (uint32_t w = 0; g.dirty && w <= g.max_dirty / 64u; w++) {
        for (uint64_t bits = g.dirty[w]; bits; bits &= bits - 1)
            g.deltas[w * 64u + (uint32_t)__builtin_ctzll(bits)] = (delta){0};
        g.dirty[w] = 0;
    }
    MT_RESET(g.ndirty, 0); /* a fork child's reset too: only what differs */
    MT_RESET(g.max_dirty, 0);
}

bool mt_cull_begin(void)
{
    release();
    g.active = g.cfg_on;
    g.thr_ms = g.cfg_thr;
    g.max = g.cfg_max;
    g.head = g.tail = g.nlive = g.early = g.culled = 0;
    clear_dirty();
    if (!g.active)
        return true;
    uint32_t slots = 2;
    while (slots < 2u * g.max)
        slots *= 2;
    g.mask = slots - 1;
    g.fifo_bytes = (size_t)g.max * sizeof(young);
    g.index_bytes = (size_t)slots * sizeof(uint32_t);
    g.fifo = mt_os_alloc(g.fifo_bytes);
    g.index = mt_os_alloc(g.index_bytes);
    if (!g.deltas) { /* reserved once: pages are backed only for the traces culled */
        g.deltas = mt_os_reserve((size_t)MT_TRACE_MAX * sizeof(delta));
        g.dirty = mt_os_reserve((size_t)MT_TRACE_MAX / 8u);
    }
    if (g.fifo && g.index && g.deltas && g.dirty)
        return true;
    release();
    g.active = false;
    return false;
}

static uint32_t home(uint64_t addr)
{
    return (uint32_t)(((addr >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & g.mask;
}

static young *at(uint64_t seq)
{
    return &g.fifo[seq % g.max];
}

/* The index slot of the young block at addr, or of the empty slot where
 * it would go. */
static uint32_t find_slot(uint64_t addr)
{
    uint32_t i = home(addr);
    while (g.index[i] && g.fifo[g.index[i] - 1].e.addr != addr)
        i = (i + 1) & g.mask;
    return i;
}

static void index_put(uint64_t seq)
{
    g.index[find_slot(at(seq)->e.addr)] = (uint32_t)(seq % g.max) + 1;
}

/* Deletion by backward shift: later entries of the probe run move up. */
static void index_del(uint32_t i)
{
    for (uint32_t j = (i + 1) & g.mask; g.index[j]; j = (j + 1) & g.mask) {
        uint32_t k = home(g.fifo[g.index[j] - 1].e.addr);
        bool movable = i <= j ? (k <= i || k > j) : (k <= i && k > j);
        if (movable) {
            g.index[i] = g.index[j];
            i = j;
        }
    }
    g.index[i] = 0;
}

/* y leaves the young set: dead in the FIFO, gone from the index. */
static void forget(young *y)
{
    index_del(find_slot(y->e.addr));
    y->live = 0;
    g.nlive--;
}

static void write_young(young *y)
{
    mt_rec_event e = y->e;
    uint32_t tid = y->tid;
    forget(y);
    mt_rr_encode_one(tid, &e);
}

static void pop_dead(void)
{
    while (g.head != g.tail && !at(g.head)->live)
        g.head++;
}

/* In-place compaction of the FIFO (live entries keep their order), then
 * the index rebuilt. */
static void compact(void)
{
    uint64_t w = g.head;
    for (uint64_t s = g.head; s != g.tail; s++)
        if (at(s)->live) {
            if (w != s)
                *at(w) = *at(s);
            w++;
        }
    g.tail = w;
    memset(g.index, 0, g.index_bytes);
    for (uint64_t s = g.head; s != g.tail; s++)
        index_put(s);
}

/* Room for one more young block: compact; if still 3/4 full, the oldest
 * are written early down to half. */
static void make_room(void)
{
    pop_dead();
    if (g.tail - g.head < g.max)
        return;
    compact();
    while (g.tail - g.head > g.max / 4u * 3u) {
        write_young(at(g.head));
        g.early++;
        pop_dead();
    }
}

static void add_delta(const mt_rec_event *e)
{
    uint32_t trace = mt_rev_trace(e);
    delta *d = &g.deltas[trace];
    if (!d->count) { /* a trace is dirty once per record */
        g.dirty[trace / 64u] |= 1ull << (trace % 64u);
        g.ndirty++;
        if (trace > g.max_dirty)
            g.max_dirty = trace;
    }
    /* A sampled target's block stands for its weight, keyed as the replay
     * keys the events it reads (trace, birth millisecond): CULLED figures
     * are then estimates like the rest (docs/recording-format.md). */
    mt_sample_weight w = mt_rec_event_weight(e); /* e: the allocation; 1, size when exact */
    d->count += w.count;
    d->bytes += w.bytes;
    if (mt_rev_flags(e) & MT_DAT_EVF_TEMPORARY) {
        d->tcount += w.count;
        d->tbytes += w.bytes;
    }
    mt_w.sum_events[MT_LOST_AC]++;
    mt_w.sum_events[MT_LOST_AB] += mt_rev_size(e);
    mt_w.sum_events[MT_LOST_FC]++;
    mt_w.sum_events[MT_LOST_FB] += mt_rev_size(e);
    g.culled++;
}

static bool same_block(const young *y, const mt_rec_event *f)
{
    return mt_rev_trace(&y->e) == mt_rev_trace(f) && mt_rev_size(&y->e) == mt_rev_size(f) &&
           y->e.t_ns / 1000000u == mt_rev_birth_ms(f);
}

/* A free: culls its young block, or writes it first; false: write the
 * free.  A MISSED free is never culled: CULLED records do not carry the
 * flag, and the replay counts missed frees (rare: the file hardly grows). */
static bool on_free(const mt_rec_event *e)
{
    uint32_t i = find_slot(e->addr);
    if (!g.index[i])
        return false;
    young *y = &g.fifo[g.index[i] - 1];
    if (!same_block(y, e))
        return false;
    if (e->t_ns < y->e.t_ns + g.thr_ms * 1000000u && !(mt_rev_flags(e) & MT_DAT_EVF_MISSED)) {
        forget(y);
        add_delta(e);
        return true;
    }
    write_young(y);
    return false;
}

static void on_alloc(uint32_t tid, const mt_rec_event *e)
{
    uint32_t i = find_slot(e->addr);
    if (g.index[i]) { /* the old block's free has not come (yet): written */
        write_young(&g.fifo[g.index[i] - 1]);
        g.early++;
    }
    make_room();
    young *y = at(g.tail);
    *y = (young){.e = *e, .tid = tid, .live = 1};
    index_put(g.tail++);
    g.nlive++;
}

bool mt_cull_event(uint32_t tid, const mt_rec_event *e)
{
    if (!g.active)
        return false;
    if (mt_rev_kind(e) == MT_DAT_EV_FREE)
        return on_free(e);
    on_alloc(tid, e);
    return true;
}

void mt_cull_expire(uint64_t now)
{
    if (!g.active)
        return;
    uint64_t wait = g.thr_ms * 1000000u + MT_CULL_GRACE_NS;
    for (pop_dead(); g.head != g.tail; pop_dead()) {
        young *y = at(g.head);
        if (now < y->e.t_ns + wait)
            break;
        write_young(y);
    }
}

/* Starts a CULLED record of n entries. */
static void record_head(uint64_t now, uint32_t n)
{
    mt_rec_buf *b = &mt_w.pay;
    mt_put_v(b, now);
    mt_put_v(b, g.early);
    mt_put_v(b, g.nlive);
    mt_put_v(b, n);
}

/* Ids ascending (the format wants them so): the dirty bitmap in order,
 * MT_DAT_ENTRIES_MAX entries a record. */
void mt_cull_write_deltas(uint64_t now)
{
    if (!g.active || !g.ndirty)
        return;
    uint32_t left = g.ndirty, in_rec = 0, prev = 0;
    mt_rec_buf *b = &mt_w.pay;
    for (uint32_t w = 0; w <= g.max_dirty / 64u; w++) {
        for (uint64_t bits = g.dirty[w]; bits; bits &= bits - 1) {
            uint32_t id = w * 64u + (uint32_t)__builtin_ctzll(bits);
            if (!in_rec) {
                in_rec = left < MT_DAT_ENTRIES_MAX ? left : MT_DAT_ENTRIES_MAX;
                left -= in_rec;
                record_head(now, in_rec);
                prev = 0;
            }
            delta *d = &g.deltas[id];
            mt_put_v(b, id - prev);
            mt_put_v(b, d->count);
            mt_put_v(b, d->bytes);
            mt_put_v(b, d->tcount);
            mt_put_v(b, d->tbytes);
            *d = (delta){0};
            prev = id;
            if (!--in_rec)
                mt_recw_emit(MT_DAT_REC_CULLED);
        }
        g.dirty[w] = 0;
    }
    g.ndirty = 0;
    g.max_dirty = 0;
}

void mt_cull_flush_all(uint64_t now)
{
    if (!g.active)
        return;
    for (pop_dead(); g.head != g.tail; pop_dead())
        write_young(at(g.head));
    mt_rr_flush_events();
    mt_cull_write_deltas(now);
}

void mt_cull_child_reset(void)
{
    /* The parent's session: forget (copy-on-write copies leak). */
    MT_RESET(g.fifo, NULL); /* only what differs (core_common.h) */
    MT_RESET(g.index, NULL);
    MT_RESET(g.active, false);
    clear_dirty();
}
