/* leak_sim.c -- allocation sites and a publisher model for the leak tests
 * (see leak_sim.h). */
#include "leak_sim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model_fixture.h"

#define SEC 1000000000ull

void sim_init(sim *s, unsigned burst_s)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < SIM_KINDS; k++)
        s->site[k].kind = (sim_kind)k;
    s->rng = 12345;
    s->burst_s = burst_s;
}

void sim_free(sim *s)
{
    for (int k = 0; k < SIM_KINDS; k++)
        free(s->site[k].live);
}

static uint64_t live_bytes(const sim_site *st)
{
    return st->alloc_bytes - st->free_bytes;
}

static void alloc_block(sim_site *st, uint64_t now, uint64_t size)
{
    if (st->nlive == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->live = realloc(st->live, st->cap * sizeof *st->live);
        if (!st->live)
            abort();
    }
    st->live[st->nlive++] = (sim_block){now, size};
    st->alloc_count++;
    st->alloc_bytes += size;
}

static void free_all(sim_site *st, bool temporary)
{
    for (size_t i = 0; i < st->nlive; i++) {
        st->free_count++;
        st->free_bytes += st->live[i].size;
        if (temporary) {
            st->temp_count++;
            st->temp_bytes += st->live[i].size;
        }
    }
    st->nlive = 0;
}

/* Frees the k oldest live blocks (blocks are in birth order). */
static void free_oldest(sim_site *st, size_t k)
{
    if (k > st->nlive)
        k = st->nlive;
    for (size_t i = 0; i < k; i++) {
        st->free_count++;
        st->free_bytes += st->live[i].size;
    }
    memmove(st->live, st->live + k, (st->nlive - k) * sizeof *st->live);
    st->nlive -= k;
}

/* n temporaries of size bytes, allocated and freed within the second. */
static void temporaries(sim_site *st, uint64_t n, uint64_t size)
{
    st->alloc_count += n;
    st->alloc_bytes += n * size;
    st->free_count += n;
    st->free_bytes += n * size;
    st->temp_count += n;
    st->temp_bytes += n * size;
}

static uint32_t next_rand(sim *s)
{
    s->rng = s->rng * 1103515245u + 12345u;
    return (s->rng >> 16) & 0x7fff;
}

/* One second of site activity ending at `now` (seconds since start: sec). */
static void run_site(sim *s, sim_site *st, unsigned sec, uint64_t now)
{
    switch (st->kind) {
    case SIM_GROWER:
        alloc_block(st, now - SEC / 2, 1024);
        break;
    case SIM_CACHE:
        for (int i = 0; sec == 1 && i < 1024; i++)
            alloc_block(st, now - SEC / 2, 1024);
        break;
    case SIM_CHURN: {
        free_all(st, false); /* the survivors of the last publish */
        st->alloc_count += 1000;
        st->alloc_bytes += 1000 * 64;
        unsigned keep = next_rand(s) % 20;
        st->free_count += 1000 - keep;
        st->free_bytes += (1000 - keep) * 64;
        st->temp_count += 1000 - keep;
        st->temp_bytes += (1000 - keep) * 64;
        st->alloc_count -= keep; /* counted again by alloc_block */
        st->alloc_bytes -= keep * 64;
        for (unsigned i = 0; i < keep; i++)
            alloc_block(st, now - SEC / 20, 64);
        break;
    }
    case SIM_FILLING:
        for (int i = 0; sec <= 60 && i < 10; i++)
            alloc_block(st, now - SEC / 2, 1024);
        break;
    case SIM_LRU:
        for (int i = 0; i < 20; i++)
            alloc_block(st, now - SEC / 2, 1024);
        if (st->nlive > 200)
            free_oldest(st, st->nlive - 200);
        break;
    case SIM_SAWTOOTH:
        if (sec % 7 == 0)
            free_all(st, false);
        else
            alloc_block(st, now - SEC / 2, 50 * 1024);
        break;
    case SIM_SLOW:
        alloc_block(st, now - SEC / 2, 100);
        break;
    case SIM_HIDDEN:
        temporaries(st, 2000, 64);
        for (int i = 0; i < 30; i++)
            alloc_block(st, now - SEC / 2, 10 * 1024);
        break;
    case SIM_SMALL:
        alloc_block(st, now - SEC / 2, 32);
        break;
    case SIM_KEYSPACE:
        for (int i = 0; i < 500; i++)
            alloc_block(st, now - SEC / 2, 96);
        free_oldest(st, 100);
        break;
    case SIM_WARMUP:
        for (int i = 0; sec >= 2 && sec <= 11 && i < 20; i++)
            alloc_block(st, now - SEC / 2, 1024);
        break;
    default: /* SIM_BURST */
        for (int i = 0; sec == 1 && i < 100; i++)
            alloc_block(st, now - SEC / 2, 1024);
        for (int i = 0; sec == s->burst_s && i < 50; i++)
            alloc_block(st, now - SEC / 2, 1024);
        break;
    }
}

static const unsigned ring_len[MT_CKPTS] = {2, 6, 2};
static const unsigned ring_base[MT_CKPTS] = {0, 2, 8};

static void rotate(sim *s, uint64_t now)
{
    static const uint64_t step[MT_CKPTS] = {900000000ull, 6 * SEC, 300 * SEC};
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        if (s->last_t[k] && now - s->last_t[k] < step[k])
            continue;
        unsigned at = ring_base[k] + s->head[k];
        for (int i = 0; i < SIM_KINDS; i++)
            s->site[i].ring[at] = live_bytes(&s->site[i]);
        s->ring_t[at] = s->last_t[k] = now;
        s->head[k] = (s->head[k] + 1) % ring_len[k];
    }
}

/* Ring position of checkpoint k (its oldest value before now), or -1. */
static int ckpt_at(const sim *s, unsigned k)
{
    for (unsigned j = 0; j < ring_len[k]; j++) {
        unsigned at = ring_base[k] + (s->head[k] + j) % ring_len[k];
        if (s->ring_t[at] && s->ring_t[at] < s->now_ns)
            return (int)at;
    }
    return -1;
}

static unsigned age_bucket(uint64_t age_ns)
{
    static const uint64_t limits_s[MT_AGE_BUCKETS - 1] = {1, 10, 60, 600, 3600, 21600, 86400};
    unsigned b = 0;
    while (b < MT_AGE_BUCKETS - 1 && age_ns >= limits_s[b] * SEC)
        b++;
    return b;
}

static void record(const sim *s, const sim_site *st, mt_shm_trace *r)
{
    r->alloc_count = st->alloc_count;
    r->alloc_bytes = st->alloc_bytes;
    r->free_count = st->free_count;
    r->free_bytes = st->free_bytes;
    r->live_count = st->alloc_count - st->free_count;
    r->live_bytes = live_bytes(st);
    r->peak_live_bytes = r->live_bytes;
    r->temporary_count = st->temp_count;
    r->temporary_bytes = st->temp_bytes;
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        int at = ckpt_at(s, k);
        r->ckpt_live_bytes[k] = at >= 0 ? st->ring[at] : 0;
    }
    r->oldest_birth_ns = MT_UNKNOWN;
    for (size_t i = 0; i < st->nlive; i++) {
        r->age_bytes[age_bucket(s->now_ns - st->live[i].birth_ns)] += st->live[i].size;
        if (st->live[i].birth_ns < r->oldest_birth_ns)
            r->oldest_birth_ns = st->live[i].birth_ns;
    }
}

mt_snapshot *sim_step(sim *s)
{
    s->now_ns += SEC;
    unsigned sec = (unsigned)(s->now_ns / SEC);
    for (int i = 0; i < SIM_KINDS; i++)
        run_site(s, &s->site[i], sec, s->now_ns);
    rotate(s, s->now_ns);
    mt_snapshot *snap = fx_snap(SIM_KINDS, (double)sec);
    for (unsigned k = 0; k < MT_CKPTS; k++) {
        int at = ckpt_at(s, k);
        snap->slot.ckpt_ns[k] = at >= 0 ? s->ring_t[at] : 0;
    }
    snap->slot.age_scan_ns = s->now_ns;
    for (int i = 0; i < SIM_KINDS; i++)
        record(s, &s->site[i], &snap->traces[i]);
    return snap;
}
