/* test_reader_exercise.c -- the whole reader and replay over one file (see
 * test_reader_exercise.h). */
#include "test_reader_exercise.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dat_reader.h"
#include "replay.h"
#include "shm_allocators.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "invariant broken: %s (%s:%d)\n", #c, __FILE__, __LINE__);             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_view(const mt_view *v)
{
    const mt_snapshot *s = &v->snap;
    CHECK(v->have_snap && !v->attached);
    CHECK(s->slot.ntimeline >= 1 && s->slot.ntimeline <= MT_TIMELINE_POINTS);
    CHECK(s->slot.ntraces <= v->defs.count);
    uint64_t live = 0;
    for (uint64_t i = 0; i < s->slot.ntraces; i++) {
        const mt_shm_trace *t = &s->traces[i];
        CHECK(t->id == i);
        CHECK(t->live_count == t->alloc_count - t->free_count);
        CHECK(t->live_bytes == t->alloc_bytes - t->free_bytes);
        CHECK(t->free_count <= t->alloc_count);
        unsigned n;
        const uint64_t *fr = mt_defs_frames(&v->defs, t->id, &n);
        CHECK(fr != NULL && n <= MT_MAX_DEPTH);
        live += t->live_bytes;
    }
    CHECK(live == s->slot.totals.live_bytes);
    /* the allocators (a recording's ALLOCATORS records): within bounds,
     * their strings terminated and printable, their texts made */
    const mt_shm_allocators *al = &v->allocs;
    CHECK(al->count <= MT_ALLOC_MAX && al->inexact <= (uint64_t)al->count + al->more);
    for (uint32_t i = 0; i < al->count; i++) {
        const mt_shm_allocator *e = &al->a[i];
        CHECK(e->kind >= 1 && e->kind <= MT_ALLOC_KIND_MAX);
        const char *str[] = {e->prefix, e->version, e->module, e->note};
        const size_t cap[] = {sizeof e->prefix, sizeof e->version, sizeof e->module,
                              sizeof e->note};
        for (unsigned k = 0; k < 4; k++) {
            size_t n = strnlen(str[k], cap[k]);
            CHECK(n < cap[k]);
            for (size_t j = 0; j < n; j++)
                CHECK((unsigned char)str[k][j] >= 0x20 && str[k][j] != 0x7f);
        }
    }
    char text[1024];
    mt_allocators_inexact_text(al, text, sizeof text);
    CHECK(strlen(text) < sizeof text);
    const mt_shm_allocator *m = mt_allocators_main(al);
    if (m)
        mt_allocator_name(m, text, sizeof text);
    for (size_t i = 0; i < v->mods.count; i++) {
        CHECK(v->mods.items[i].start < v->mods.items[i].end);
        CHECK(mt_modules_find(&v->mods, v->mods.items[i].start) != NULL);
    }
}

static mt_errc raw_pass(const char *path)
{
    mt_err err;
    mt_dat_reader *r = mt_dat_open(path, &err);
    if (!r)
        return err.code;
    mt_dat_event ev;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK) {
        CHECK(ev.kind <= MT_DAT_CULLED);
        if (ev.kind == MT_DAT_CULLED) /* what the reader promises of every CULLED item */
            CHECK(ev.u.culled.count && ev.u.culled.temporary_count <= ev.u.culled.count &&
                  ev.u.culled.temporary_bytes <= ev.u.culled.bytes);
    }
    mt_dat_close(r);
    return rc == MT_E_EMPTY ? MT_OK : rc;
}

/* The blocks a reader gave (mt_dat_defer_blocks), in order. */
typedef struct given {
    mt_dat_block *b;
    size_t n, cap;
} given;

static int take_given(void *ctx, const mt_dat_block *b, size_t n)
{
    given *g = ctx;
    CHECK(n >= 1 && n <= MT_DAT_BLOCKS_PER_CALL);
    if (g->n + n > g->cap) {
        g->cap = (g->n + n) * 2;
        g->b = realloc(g->b, g->cap * sizeof *g->b);
        CHECK(g->b != NULL);
    }
    memcpy(g->b + g->n, b, n * sizeof *b);
    g->n += n;
    return 0;
}

static void same_given(const given *a, const given *b)
{
    CHECK(a->n == b->n);
    for (size_t i = 0; i < a->n; i++)
        CHECK(a->b[i].trace == b->b[i].trace && a->b[i].size == b->b[i].size &&
              a->b[i].birth_ms == b->b[i].birth_ms);
}

/* The next event of a, checked against one from b's batch. */
static void same_event(mt_dat_reader *a, const mt_dat_hev *h)
{
    mt_dat_event ev;
    mt_err err;
    CHECK(mt_dat_next(a, &ev, &err) == MT_OK);
    CHECK(ev.kind == h->kind && ev.t_ns == h->t_ns);
    CHECK(ev.u.ev.tid == h->ev.tid && ev.u.ev.trace == h->ev.trace && ev.u.ev.size == h->ev.size &&
          ev.u.ev.flags == h->ev.flags && ev.u.ev.birth_ms == h->ev.birth_ms &&
          ev.u.ev.deferred == h->ev.deferred);
}

/* mt_dat_next_batch gives what as many mt_dat_next calls would: the same
 * events, then the same end or error (batches of `per` events); with
 * `defer`, the same deferred flags and the same blocks given, in order,
 * at each frame's end and at a flush after each TOTALS (as the replay's
 * first pass). */
static void batch_pass(const char *path, size_t per, bool defer)
{
    mt_err ea, eb;
    mt_dat_reader *a = mt_dat_open(path, &ea), *b = mt_dat_open(path, &eb);
    CHECK((a == NULL) == (b == NULL));
    given ga = {NULL, 0, 0}, gb = {NULL, 0, 0};
    if (a && defer) {
        mt_dat_defer_blocks(a, take_given, &ga);
        mt_dat_defer_blocks(b, take_given, &gb);
    }
    mt_dat_event ev, x;
    mt_dat_hev h[256]; /* up to the run decoder's longest run */
    mt_errc ra = MT_OK, rb = MT_OK;
    while (a && (rb = mt_dat_next(b, &ev, &eb)) == MT_OK) {
        CHECK((ra = mt_dat_next(a, &x, &ea)) == MT_OK && x.kind == ev.kind && x.t_ns == ev.t_ns);
        if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE)
            CHECK(x.u.ev.deferred == ev.u.ev.deferred);
        if (ev.kind == MT_DAT_TOTALS) {
            CHECK(mt_dat_flush_blocks(a, &ea) == MT_OK && mt_dat_flush_blocks(b, &eb) == MT_OK);
            same_given(&ga, &gb);
        }
        size_t n;
        while ((rb = mt_dat_next_batch(b, h, per, &n, &eb)) == MT_OK && n) {
            CHECK(n <= per);
            for (size_t i = 0; i < n; i++)
                same_event(a, &h[i]);
        }
        for (size_t i = 0; rb != MT_OK && i < n; i++) /* the events before the error */
            same_event(a, &h[i]);
        if (rb != MT_OK)
            break;
    }
    if (a) {
        ra = mt_dat_next(a, &x, &ea);
        CHECK(ra == rb && (ra == MT_E_EMPTY || strcmp(ea.msg, eb.msg) == 0));
        CHECK(ra != MT_E_EMPTY ||
              (mt_dat_flush_blocks(a, &ea) == MT_OK && mt_dat_flush_blocks(b, &eb) == MT_OK));
        same_given(&ga, &gb);
        mt_dat_close(a);
        mt_dat_close(b);
    }
    free(ga.b);
    free(gb.b);
}

mt_errc mt_exercise_recording(const char *path, unsigned long seed)
{
    batch_pass(path, 1 + seed % 256, (seed >> 8) & 1);
    mt_errc raw = raw_pass(path);
    mt_err err;
    mt_replay *r = mt_replay_open(path, &err);
    CHECK((r == NULL) == (raw != MT_OK) || raw == MT_OK);
    if (!r)
        return err.code;
    const mt_replay_info *in = mt_replay_get_info(r);
    mt_view v;
    mt_view_init(&v);
    uint64_t times[6] = {UINT64_MAX,          0,
                         in->duration_ns / 2, in->duration_ns / 3,
                         in->duration_ns,     (uint64_t)seed % (in->duration_ns + 1)};
    mt_errc rc = MT_OK;
    for (unsigned i = 0; i < 6 && !rc; i++) {
        rc = mt_replay_seek(r, times[i], &v, &err);
        if (!rc)
            check_view(&v);
    }
    size_t n;
    const mt_shm_point *tl = mt_replay_timeline(r, &n);
    CHECK(n <= 4096 && (n == 0 || tl != NULL));
    mt_replay_view_free(&v);
    mt_replay_close(r);
    return rc;
}
