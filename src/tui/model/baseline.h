/* baseline.h -- the figures of every trace at the moment the user pressed
 * `b`, so that the table can show the change since then ("what did this
 * action leave behind?").  Cost while set: 48 bytes per trace id. */
#ifndef MEMTOP_MODEL_BASELINE_H
#define MEMTOP_MODEL_BASELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "memtop_ipc.h"

/* The additive figures the table shows. */
typedef struct mt_base_fig {
    uint64_t live_bytes, live_count, alloc_count, alloc_bytes, free_count, temporary_count;
} mt_base_fig;

typedef struct mt_baseline {
    mt_base_fig *fig; /* per trace id; zero for ids not in the baseline */
    uint32_t rows;
    uint64_t t_ns; /* the snapshot's time */
    bool set;
} mt_baseline;

void mt_baseline_init(mt_baseline *b);
/* Replaces the baseline with snap's figures; 0 or -1 (memory: unchanged). */
int mt_baseline_set(mt_baseline *b, const mt_snapshot *snap);
void mt_baseline_clear(mt_baseline *b);
/* The baseline figures of id, or NULL when it had none (count from 0). */
const mt_base_fig *mt_baseline_get(const mt_baseline *b, uint32_t id);
/* acc += the baseline figures of id. */
void mt_baseline_add(const mt_baseline *b, uint32_t id, mt_base_fig *acc);

#endif
