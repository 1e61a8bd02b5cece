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
 * look-ahead) meet bad bytes too. */
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

void db_v7_random(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out)
{
    v7model *m = calloc(1, sizeof *m);
    assert(m);
    m->rng = seed;
    m->out = out;
    out->n = 0;
    db_culled_head(f, MT_DAT_VERSION_RUNS, MT_DAT_MODE_FULL, 0);
    db_ev2 e = {0};
    for (unsigned fr = 0; fr < frames; fr++) {
        for (unsigned r = 0; r < 6; r++) {
            uint32_t tid = 1 + (uint32_t)rnd(m, MX);
            model_record(m, &e, 50 + (unsigned)rnd(m, 600));
            if (e.n)
                db_ev2_record(f, &e, tid, (2000 + fr) * MS);
        }
        db_flush(f);
        m->prev = m->cur;
        memset(&m->cur, 0, sizeof m->cur);
    }
    db_ev2_free(&e);
    free(m);
}
