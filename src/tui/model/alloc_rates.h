/* alloc_rates.h -- allocations per second of every trace between the
 * previous and the current snapshot.
 *
 * Why: the table's "allocs/s" column; a snapshot holds only running totals,
 * so the rate needs the snapshot before it.  Cost: 4 bytes per trace id. */
#ifndef MEMTOP_MODEL_ALLOC_RATES_H
#define MEMTOP_MODEL_ALLOC_RATES_H

#include <stdbool.h>
#include <stdint.h>

#include "memtop_ipc.h"

typedef struct mt_alloc_rates {
    float *per_s;  /* per trace id; 0 = unknown or none */
    uint32_t rows; /* ids below this have a rate */
    bool known;    /* the last update had a snapshot before it (a replay's never has) */
} mt_alloc_rates;

void mt_alloc_rates_init(mt_alloc_rates *r);
void mt_alloc_rates_free(mt_alloc_rates *r);
/* Make ids below rows addressable; 0 or -1 (memory). */
int mt_alloc_rates_reserve(mt_alloc_rates *r, uint32_t rows);
/* Rates of snap against prev (NULL, older process image or no time between:
 * every rate 0).  A trace missing from prev counts from 0. */
void mt_alloc_rates_update(mt_alloc_rates *r, const mt_snapshot *snap, const mt_snapshot *prev);
double mt_alloc_rate(const mt_alloc_rates *r, uint32_t id);

#endif
