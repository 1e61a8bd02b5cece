/* test_reader_long.c -- db_long (test_reader_builder.h): a recording of
 * long EVENTS2 records (version 5, in the threads' order or, db_long_ticks,
 * in tick order: the traces column holds steps), written from a model of the frame
 * context (per trace: allocations, live blocks, last size, next trace).
 *
 * Why: the other builders' records hold 3 events, so the reader's run
 * decoder (dat_reader_batch2.c: runs of up to 256 events, every event but
 * a record's last) and the block table behind a trace's newest blocks
 * were barely reached by the mutation corpus; here each record holds
 * hundreds of events of every kind, frees name old blocks and blocks of
 * the frame's other record, and blocks are still live at each TOTALS and
 * frame end (the deferred blocks of the replay's first pass). */
#include <stdbool.h>
#include <string.h>

#include "test_reader_builder.h"

#define LONG_TRACES 3u /* the ids db_culled_head defines */
#define LONG_BLOCKS 512u

typedef struct long_trace {
    uint64_t count; /* allocations in this frame */
    uint64_t size[LONG_BLOCKS], birth_ms[LONG_BLOCKS];
    unsigned char live[LONG_BLOCKS];
    uint64_t last_size;
    int has_size;
    uint32_t next; /* next(trace) + 1, 0: none */
} long_trace;

typedef struct long_model {
    long_trace tr[LONG_TRACES];
    uint64_t rng, t;      /* the record's time, ns */
    uint32_t prev;        /* the previous event's trace */
    bool ticks;           /* tick order: traces as steps (dat_format.h mt_dat_trace_step) */
    uint32_t col;         /* the trace the record's traces column gave last */
    int have, prev_alloc; /* a trace given in this record; the previous event an ALLOC */
} long_model;

static uint64_t long_rand(long_model *m)
{
    return test_xorshift(&m->rng);
}

/* Sizes of 1 to 6 varint bytes, some past a block slot's 40 bits. */
static uint64_t long_size(long_model *m)
{
    static const uint64_t sizes[] = {8, 24, 100, 200, 4096, 70000, 1ull << 41};
    return sizes[long_rand(m) % 7] + long_rand(m) % 3;
}

/* A trace into the traces column: its id, or in tick order its step. */
static void put_trace(db_ev2 *e, long_model *m, uint32_t trace)
{
    db_ev2_put(e, DB_TRACES, m->ticks ? mt_dat_zigzag((int64_t)trace - (int64_t)m->col) : trace);
    m->col = trace;
}

/* The time column (dt, or SAME_TIME) and the trace column (SAME_TRACE,
 * or NEXT_TRACE for an ALLOC when next(prev) is trace). */
static unsigned long_head(db_ev2 *e, long_model *m, unsigned kind, uint32_t trace)
{
    unsigned tag = kind;
    uint64_t dt = long_rand(m) % 4 == 0 ? 0 : long_rand(m) % 3 ? 1000 : 1500000;
    bool next = kind == MT_DAT_EV_ALLOC && m->prev_alloc && m->tr[m->prev].next == trace + 1;
    tag |= dt ? 0 : MT_DAT_EV_SAME_TIME;
    tag |= next ? MT_DAT_EV_NEXT_TRACE : m->have && m->prev == trace ? MT_DAT_EV_SAME_TRACE : 0;
    db_ev2_tag(e, tag);
    if (dt)
        db_ev2_put(e, DB_TIMES, dt);
    if (!next && !(tag & MT_DAT_EV_SAME_TRACE)) /* bit 4 of a free is a flag */
        put_trace(e, m, trace);
    m->t += dt;
    if (kind == MT_DAT_EV_ALLOC && m->prev_alloc && m->prev != trace)
        m->tr[m->prev].next = trace + 1;
    m->prev = trace;
    m->have = 1;
    m->prev_alloc = kind == MT_DAT_EV_ALLOC;
    return tag;
}

static void long_alloc(db_ev2 *e, long_model *m, uint32_t trace)
{
    long_trace *t = &m->tr[trace];
    bool same = t->has_size && long_rand(m) % 3 == 0;
    uint64_t size = same ? t->last_size : long_size(m);
    unsigned tag = long_head(e, m, MT_DAT_EV_ALLOC, trace);
    e->col[0][0].p[e->col[0][0].n - 1] = (unsigned char)(tag | (same ? MT_DAT_EV_SAME_SIZE : 0));
    if (!same)
        db_ev2_put(e, DB_SIZES, size);
    uint64_t k = t->count++ % LONG_BLOCKS;
    t->size[k] = size;
    t->birth_ms[k] = m->t / 1000000u;
    t->live[k] = 1;
    t->last_size = size;
    t->has_size = 1;
}

/* A free naming a live block of trace, the newest or an older one;
 * false when it has none among its last LONG_BLOCKS. */
static bool long_free_ref(db_ev2 *e, long_model *m, uint32_t trace)
{
    long_trace *t = &m->tr[trace];
    uint64_t span = t->count < LONG_BLOCKS ? t->count : LONG_BLOCKS;
    uint64_t ref = span ? long_rand(m) % 2 ? 0 : long_rand(m) % span : 0;
    for (uint64_t i = 0; i < span; i++, ref = (ref + 1) % span) {
        uint64_t k = (t->count - 1 - ref) % LONG_BLOCKS;
        if (!t->live[k])
            continue;
        unsigned flags = (unsigned)(long_rand(m) % 2) << MT_DAT_EV_FLAGS_SHIFT; /* temporary */
        long_head(e, m, MT_DAT_EV_FREE_REF | flags, trace);
        db_ev2_put(e, DB_REFS, ref);
        t->live[k] = 0;
        t->last_size = t->size[k];
        t->has_size = 1;
        return true;
    }
    return false;
}

/* A free written in full: a block of an earlier frame (age up to 2 s). */
static void long_free(db_ev2 *e, long_model *m, uint32_t trace)
{
    long_trace *t = &m->tr[trace];
    bool same = t->has_size && long_rand(m) % 4 == 0;
    uint64_t size = same ? t->last_size : long_size(m), ms = m->t / 1000000u;
    unsigned tag = long_head(e, m, MT_DAT_EV_FREE, trace);
    e->col[0][0].p[e->col[0][0].n - 1] = (unsigned char)(tag | (same ? MT_DAT_EV_SAME_SIZE : 0));
    if (!same)
        db_ev2_put(e, DB_SIZES, size);
    db_ev2_put(e, DB_AGES, long_rand(m) % (ms < 2000 ? ms + 1 : 2000));
    t->last_size = size;
    t->has_size = 1;
}

static void long_record(db_file *f, long_model *m, uint64_t tid, uint64_t base, unsigned n)
{
    db_ev2 e = {0};
    m->t = base;
    m->have = m->prev_alloc = 0;
    m->col = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t trace = (uint32_t)(long_rand(m) % LONG_TRACES);
        unsigned what = (unsigned)(long_rand(m) % 20);
        if (what >= 11 || (what >= 3 && !long_free_ref(&e, m, trace)))
            long_alloc(&e, m, trace); /* 45 %, and a free with nothing to name */
        else if (what < 3)
            long_free(&e, m, trace);
    }
    db_ev2_record(f, &e, tid, base);
}

static void long_file(db_file *f, unsigned frames, unsigned events, bool ticks)
{
    long_model m;
    memset(&m, 0, sizeof m);
    m.rng = 0x9e3779b97f4a7c15ull;
    m.ticks = ticks;
    db_order_head(f, MT_DAT_VERSION_PREV, MT_DAT_MODE_FULL, 0,
                  ticks ? MT_DAT_ORDER_TICK : MT_DAT_ORDER_THREAD);
    for (unsigned i = 0; i < frames; i++) {
        uint64_t base = (uint64_t)(i + 1) * 1000000000ull;
        memset(m.tr, 0, sizeof m.tr); /* a new frame: a new context */
        long_record(f, &m, 5, base, events);
        db_totals(f, base + 600000000ull, 1000, 2000);
        long_record(f, &m, 6, base + 700000000ull, events / 2);
        db_flush(f);
    }
}

void db_long(db_file *f, unsigned frames, unsigned events)
{
    long_file(f, frames, events, false);
}

void db_long_ticks(db_file *f, unsigned frames, unsigned events)
{
    long_file(f, frames, events, true);
}
