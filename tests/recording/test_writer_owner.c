/* test_writer_owner.c -- unit test of version 7's references by thread on
 * the writer's side (src/preload/record/record_owner.c) against a model
 * that keeps, per frame, every allocation's trace, serial, thread and
 * index among the thread's allocations of the trace, as a reader does.
 *
 * Random allocations by up to 64 threads of up to 3,000 traces over frames
 * of 2,000 to 200,000 allocations (the (trace, thread) hash grows, and
 * rebuilds drop the pairs of older frames), new files now and then; for
 * random blocks of this frame and the frame before, freed by their own
 * thread or another: mt_ro_block must give the block's serial, and an own
 * ref only to the thread that allocated it, equal to the model's n(T, X) -
 * 1 - j (p(T, X) - 1 - j).  With memory refused (this file's mt_os_alloc,
 * on a switch) the answers may degrade to OTHER or "unknown", never to a
 * wrong ref.  Exit 0 when every answer matches. */
#include "record_owner.h"

#include "dat_format.h"
#include "test_xorshift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* memtop's own memory, refused while g_refuse (record_owner.c's only
 * source of memory: core_os_memory.c is not linked). */
static bool g_refuse;

void *mt_os_alloc(size_t bytes)
{
    if (g_refuse)
        return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void mt_os_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

#define TRACES 3000u
#define THREADS 64u

typedef struct block {
    uint32_t trace, tid, k, j; /* tid: 1000 + the model's thread */
} block;

typedef struct frame_model {
    block *b;      /* by ordinal f */
    uint32_t n;    /* allocations */
    uint32_t *nt;  /* per trace: n(T) */
    uint32_t *ntx; /* per trace x thread: n(T, X) */
    bool degraded; /* memory was refused in this frame */
} frame_model;

static frame_model cur, before;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int failures;
static uint64_t own_answers, other_answers, unknown_answers;

static uint64_t rnd(void)
{
    return test_xorshift(&rng);
}

static void model_init(frame_model *m)
{
    m->b = calloc(MT_DAT_FRAME_ALLOCS_MAX, sizeof *m->b);
    m->nt = calloc(TRACES, sizeof *m->nt);
    m->ntx = calloc((size_t)TRACES * THREADS, sizeof *m->ntx);
}

static void model_clear(frame_model *m)
{
    m->n = 0;
    m->degraded = false;
    memset(m->nt, 0, TRACES * sizeof *m->nt);
    memset(m->ntx, 0, (size_t)TRACES * THREADS * sizeof *m->ntx);
}

static void fail(const char *what, uint32_t f, uint64_t got, uint64_t want)
{
    if (failures++ < 10)
        fprintf(stderr, "FAIL: %s: allocation %u: got %llu, want %llu\n", what, f,
                (unsigned long long)got, (unsigned long long)want);
}

/* Checks the answer for block f of m (prev: the frame before) freed by tid. */
static void check_free(bool prev, const frame_model *m, uint32_t f, uint32_t tid, uint32_t *hints)
{
    const block *b = &m->b[f];
    uint64_t k, own;
    if (!mt_ro_block(prev, f, b->trace, tid, &k, &own, &hints[b->trace])) {
        unknown_answers++;
        if (!m->degraded)
            fail("block unknown without a refusal", f, 0, 1);
        return;
    }
    if (k != b->k)
        fail("serial", f, k, b->k);
    if (own == UINT64_MAX) {
        other_answers++;
        if (b->tid == tid && !m->degraded)
            fail("OTHER for the thread's own block", f, own, 0);
        return;
    }
    own_answers++;
    uint32_t n = m->ntx[(size_t)b->trace * THREADS + (b->tid - 1000u)];
    if (b->tid != tid)
        fail("own ref for another thread's block", f, tid, b->tid);
    else if (own != n - 1u - b->j)
        fail(prev ? "own ref in the frame before" : "own ref", f, own, n - 1u - b->j);
}

enum { NO_REFUSAL, REFUSE_MIDDLE, REFUSE_START };

/* One frame of `allocs` allocations over `traces` traces and `threads`
 * threads, frees checked along the way; memory refused for a stretch in
 * the middle (the hash cannot grow) or at the start (nor the info array
 * be mapped, after a release). */
static void frame(uint32_t allocs, uint32_t traces, uint32_t threads, int refuse, uint32_t *hints)
{
    for (uint32_t i = 0; i < allocs; i++) {
        g_refuse = refuse == REFUSE_MIDDLE ? i > allocs / 3 && i < allocs / 2
                                           : refuse == REFUSE_START && i < allocs / 3;
        cur.degraded |= g_refuse;
        uint32_t trace = (uint32_t)(rnd() % traces), tid = 1000u + (uint32_t)(rnd() % threads);
        uint32_t f = cur.n++;
        uint32_t *nx = &cur.ntx[(size_t)trace * THREADS + (tid - 1000u)];
        cur.b[f] = (block){trace, tid, cur.nt[trace]++, (*nx)++};
        mt_ro_note_alloc(f, trace, tid, cur.b[f].k, &hints[trace]);
        g_refuse = false;
        if (rnd() % 4 == 0) { /* a free of some block of this frame or the one before */
            bool prev = before.n && rnd() % 3 == 0;
            frame_model *m = prev ? &before : &cur;
            uint32_t g = (uint32_t)(rnd() % m->n);
            uint32_t by = rnd() % 2 ? m->b[g].tid : 1000u + (uint32_t)(rnd() % threads);
            check_free(prev, m, g, by, hints);
        }
    }
}

static void new_frame(void)
{
    frame_model x = before;
    before = cur;
    cur = x;
    model_clear(&cur);
    mt_ro_new_frame();
}

static void new_file(void)
{
    model_clear(&cur);
    model_clear(&before);
    mt_ro_new_file();
}

int main(void)
{
    static uint32_t hints[TRACES];
    model_init(&cur);
    model_init(&before);
    new_file();
    frame(200000, 3000, 64, NO_REFUSAL, hints); /* thousands of pairs: the hash grows */
    new_frame();
    frame(2000, 10, 4, NO_REFUSAL, hints); /* few pairs: the frame before's stay */
    new_frame();
    for (int i = 0; i < 30; i++) { /* rebuilds drop pairs two frames old */
        frame(20000 + (uint32_t)(rnd() % 20000), 100 + (uint32_t)(rnd() % 2900),
              1 + (uint32_t)(rnd() % 64), NO_REFUSAL, hints);
        new_frame();
        if (i % 10 == 9)
            new_file();
    }
    frame(50000, 3000, 64, REFUSE_MIDDLE, hints); /* the hash cannot grow for a while */
    new_frame();
    frame(50000, 3000, 64, NO_REFUSAL, hints); /* the frame before was degraded */
    new_frame();
    mt_ro_release(); /* a session ends; the next one's file */
    new_file();
    frame(30000, 500, 8, REFUSE_START, hints); /* the info array mapped late */
    new_frame();
    frame(30000, 500, 8, NO_REFUSAL, hints);
    printf("own %llu, OTHER %llu, unknown %llu answers; %llu bytes mapped at the end\n",
           (unsigned long long)own_answers, (unsigned long long)other_answers,
           (unsigned long long)unknown_answers, (unsigned long long)mt_ro_bytes());
    if (!own_answers || !other_answers || !unknown_answers)
        fprintf(stderr, "FAIL: every kind of answer must occur\n"), failures++;
    mt_ro_release();
    return failures ? 1 : 0;
}
