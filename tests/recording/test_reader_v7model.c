/* test_reader_v7model.c -- db_v7_random (test_reader_builder.h): random
 * version-7 recordings (docs/recording-format.md, 13 EVENTS2, "Version
 * 7") written from a model of the frame context: 3 threads allocating and
 * freeing on 3 traces, frees naming their block (among every thread's
 * blocks of the trace) in the frame or the frame before, in runs of
 * references where they ascend, allocations with rising sizes and
 * SAME_SIZE.
 *
 * Why: test_reader_v7.c checks the sizes the reader gives against the
 * model's (one event at a time, in runs, after seeks), and the mutation
 * test corrupts these files, so that the version-7 paths of the reader
 * (the runs' and the rising sizes' arithmetic, in both decoders and the
 * look-ahead) meet bad bytes too.
 *
 * db_v8_random: the same events (the same model from the same seed) in a
 * version-8 file (13 EVENTS2, "Version 8"): per frame none, one or two
 * random TAG_PAIRS tables (pairs of the frame's tags and pairs of no
 * tag, contexts left out), the tags coded by the one in force, with
 * random escapes. */
#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "test_reader_builder.h"

#define MS 1000000ull

#define MT 3u      /* traces 0 to 2 */
#define MX 3u      /* threads 1 to 3 */
#define MBLK 4096u /* blocks per trace and frame, at most */

/* A block of the model: its size, live. */
typedef struct mblock {
    uint64_t size;
    bool live;
} mblock;

typedef struct mframe {
    mblock b[MT][MBLK];
    uint32_t n[MT];
    uint64_t last[MT];
    bool has[MT];
} mframe;

typedef struct v7model {
    uint64_t rng;
    mframe cur, prev;
    db_v7_sizes *out;
} v7model;

static uint64_t rnd(v7model *m, uint64_t n)
{
    return test_xorshift(&m->rng) % n;
}

/* One record (its thread does not matter to the encoding): random allocations and frees of every
 * kind, encoded with version 7's runs and rising sizes wherever they apply, the model's sizes in
 * m->want. */
static void model_record(v7model *m, db_ev2 *e, unsigned nev)
{
    unsigned pkey = 0xffu; /* the previous event's kind */
    uint32_t ptrace = UINT32_MAX;
    uint64_t pref = 0;
    for (unsigned i = 0; i < nev && m->out->n < DB_V7_WANT; i++) {
        mframe *f = &m->cur;
        unsigned kind = (unsigned)rnd(m, 3); /* 0 ALLOC, 1 FREE_REF, 2 FREE_PREV */
        uint32_t T = rnd(m, 4) ? ptrace : (uint32_t)rnd(m, MT); /* mostly the same trace */
        if (T == UINT32_MAX)
            T = (uint32_t)rnd(m, MT);
        mframe *g = kind == 2 ? &m->prev : f;
        uint32_t k = UINT32_MAX; /* a live block of T to free, mostly a recent one */
        for (unsigned tries = 0; kind && g->n[T] && tries < 8 && k == UINT32_MAX; tries++) {
            uint32_t c = (uint32_t)(g->n[T] - 1 - rnd(m, g->n[T] < 6 ? g->n[T] : 6));
            if (g->b[T][c].live)
                k = c;
        }
        if (kind && k == UINT32_MAX)
            kind = 0;
        if (kind == 0 && f->n[T] == MBLK)
            continue;
        unsigned tag = MT_DAT_EV_SAME_TIME, key;
        bool same = T == ptrace;
        if (kind == 0) {
            uint64_t size = 1 + rnd(m, 64);
            if (same && f->has[T] && size > f->last[T] && rnd(m, 2)) { /* rising */
                db_ev2_tag(e, tag | MT_DAT_EV_SAME_TRACE);
                db_ev2_put(e, DB_SIZES, size - f->last[T] - 1);
            } else if (f->has[T] && size == f->last[T]) {
                db_ev2_tag(e, tag | MT_DAT_EV_SAME_SIZE);
                db_ev2_put(e, DB_TRACES, T);
            } else {
                db_ev2_tag(e, tag);
                db_ev2_put(e, DB_TRACES, T), db_ev2_put(e, DB_SIZES, size);
            }
            f->b[T][f->n[T]++] = (mblock){size, true};
            f->last[T] = size, f->has[T] = true;
            m->out->want[m->out->n++] = size;
            key = MT_DAT_EV_ALLOC;
        } else {
            mblock *b = &g->b[T][k];
            uint64_t ref = g->n[T] - 1 - k;
            tag |= kind == 1 ? MT_DAT_EV_FREE_REF : MT_DAT_EV_FREE_PREV;
            key = tag & MT_DAT_EV_KIND_MASK;
            if (same && key == pkey && ref > pref) { /* a run */
                db_ev2_tag(e, tag | MT_DAT_EV_SAME_TRACE);
                db_ev2_put(e, DB_REFS, ref - pref - 1);
            } else {
                db_ev2_tag(e, tag);
                db_ev2_put(e, DB_TRACES, T), db_ev2_put(e, DB_REFS, ref);
            }
            pref = ref;
            b->live = false;
            if (kind == 1)
                f->last[T] = b->size, f->has[T] = true;
            m->out->want[m->out->n++] = b->size;
        }
        pkey = key;
        ptrace = T;
    }
}

/* A random table for the records recs[from, to): each pair of their
 * tags (in its context, the tag before) in 3 of 4 contexts, 4 in 5 of
 * those pairs, and pairs that no tag makes, shuffled, at most 255 a
 * context.  Drawn from *rng, not the model's: the events stay those of
 * the version-7 file of the same seed. */
static void random_table(uint64_t *rng, const db_ev2 *recs, unsigned from, unsigned to, db_pairs *t)
{
    memset(t->n, 0, sizeof t->n);
    bool skip[256];
    for (unsigned c = 0; c < 256; c++)
        skip[c] = test_xorshift(rng) % 4 == 0;
    for (unsigned r = from; r < to; r++) {
        const unsigned char *g = recs[r].col[0][0].p;
        for (size_t i = 0, c = 0; i + 1 < recs[r].n; c = g[i + 1], i += 2) {
            uint16_t pair = (uint16_t)(g[i] | g[i + 1] << 8);
            bool have = false;
            for (unsigned x = 0; x < t->n[c] && !have; x++)
                have = t->p[c][x] == pair;
            if (!have && !skip[c] && t->n[c] < 255 && test_xorshift(rng) % 5)
                t->p[c][t->n[c]++] = pair;
        }
    }
    for (unsigned c = 0; c < 256; c++) {
        for (unsigned k = (unsigned)(test_xorshift(rng) % 3); k-- && t->n[c] && t->n[c] < 255;)
            t->p[c][t->n[c]++] = (uint16_t)test_xorshift(rng); /* a pair of no tag */
        for (unsigned x = t->n[c]; x > 1; x--) {
            unsigned y = (unsigned)(test_xorshift(rng) % x);
            uint16_t s = t->p[c][x - 1];
            t->p[c][x - 1] = t->p[c][y], t->p[c][y] = s;
        }
    }
}

/* A frame's records in version 8: with no table (1 in 5), or a table
 * first and (1 in 3) another one from a record on. */
static void write_v8(db_file *f, uint64_t *rng, db_ev2 *recs, const uint32_t *tids, unsigned n,
                     uint64_t base)
{
    static db_pairs t;
    unsigned mode = (unsigned)(test_xorshift(rng) % 15);
    unsigned second = mode >= 10 ? 1 + (unsigned)(test_xorshift(rng) % 5) : n;
    if (mode >= 3)
        random_table(rng, recs, 0, second, &t), db_tag_pairs(f, &t);
    db_buf codes = {0};
    for (unsigned r = 0; r < n; r++) {
        if (r == second)
            random_table(rng, recs, second, n, &t), db_tag_pairs(f, &t);
        if (!recs[r].n)
            continue;
        if (mode < 3) {
            db_ev2_record8(f, &recs[r], tids[r], base, NULL, 0);
            continue;
        }
        db_ev2_code(&t, &recs[r], &codes, rng);
        db_ev2_record8(f, &recs[r], tids[r], base, codes.p, codes.n);
    }
    db_buf_free(&codes);
}

static void random_file(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out, bool v8)
{
    v7model *m = calloc(1, sizeof *m);
    assert(m);
    m->rng = seed;
    m->out = out;
    out->n = 0;
    uint64_t rng8 = seed ^ 0x5851f42d4c957f2dull;
    db_culled_head(f, v8 ? MT_DAT_VERSION_PAIRS : MT_DAT_VERSION_RUNS, MT_DAT_MODE_FULL, 0);
    db_ev2 recs[6];
    memset(recs, 0, sizeof recs);
    uint32_t tids[6];
    for (unsigned fr = 0; fr < frames; fr++) {
        for (unsigned r = 0; r < 6; r++) {
            tids[r] = 1 + (uint32_t)rnd(m, MX);
            model_record(m, &recs[r], 50 + (unsigned)rnd(m, 600));
            if (!v8 && recs[r].n)
                db_ev2_record(f, &recs[r], tids[r], (2000 + fr) * MS);
        }
        if (v8)
            write_v8(f, &rng8, recs, tids, 6, (2000 + fr) * MS);
        db_flush(f);
        m->prev = m->cur;
        memset(&m->cur, 0, sizeof m->cur);
    }
    for (unsigned r = 0; r < 6; r++)
        db_ev2_free(&recs[r]);
    free(m);
}

void db_v7_random(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out)
{
    random_file(f, frames, seed, out, false);
}

void db_v8_random(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out)
{
    random_file(f, frames, seed, out, true);
}
