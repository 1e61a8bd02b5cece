/* leak_sim.h -- a small model of libmemtop's publisher for the leak score
 * tests: allocation sites with known behaviour, advanced one publish (1 s)
 * at a time, producing snapshots with the same growth checkpoints (the
 * oldest value of rings of 2, 6 and 2 values taken 0.9 s, 6 s and 300 s
 * apart) and age buckets as the real one (src/preload/publish/publish_snapshot.c). */
#ifndef MEMTOP_TEST_LEAK_SIM_H
#define MEMTOP_TEST_LEAK_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "memtop_ipc.h"

typedef enum sim_kind {
    SIM_GROWER,   /* 1 block of 1 KB per second, never freed */
    SIM_CACHE,    /* 1 MB in the first second, then held still */
    SIM_CHURN,    /* 1000 short-lived 64 B blocks per second; 0..19 alive at a publish */
    SIM_FILLING,  /* 10 KB per second for the first 60 s, then held still */
    SIM_BURST,    /* 100 KB at start, flat, then one 50 KB burst at burst_s */
    SIM_WARMUP,   /* 20 KB per second from second 2 to 11 (an index built at start), then flat */
    SIM_LRU,      /* a cache of 200 x 1 KB: 20 entries in per second, the oldest 20 out once full */
    SIM_SAWTOOTH, /* a batch buffer: 50 KB more each second, all freed every 7th second */
    SIM_SLOW,     /* a slow steady leak: 100 B per second, never freed */
    SIM_HIDDEN,   /* 2000 temporaries of 64 B per second, and 30 x 10 KB kept per second */
    SIM_SMALL,    /* a tiny steady leak: 32 B per second, never freed */
    SIM_KEYSPACE, /* Redis's keyspace: 500 keys of 96 B per second, 100 old ones overwritten */
    SIM_KINDS
} sim_kind;

#define SIM_RING_VALUES 10u

typedef struct sim_block {
    uint64_t birth_ns, size;
} sim_block;

typedef struct sim_site {
    sim_kind kind;
    sim_block *live;
    size_t nlive, cap;
    uint64_t alloc_count, alloc_bytes, free_count, free_bytes, temp_count, temp_bytes;
    uint64_t ring[SIM_RING_VALUES];
} sim_site;

typedef struct sim {
    sim_site site[SIM_KINDS];
    uint64_t now_ns;
    uint64_t ring_t[SIM_RING_VALUES];
    unsigned head[MT_CKPTS];
    uint64_t last_t[MT_CKPTS];
    uint32_t rng;
    unsigned burst_s;
} sim;

void sim_init(sim *s, unsigned burst_s);
void sim_free(sim *s);
/* Advances one second (the sites allocate, then a publish); returns a new
 * snapshot of the publish (fx_snap_free it).  Trace id = sim_kind. */
mt_snapshot *sim_step(sim *s);

#endif
