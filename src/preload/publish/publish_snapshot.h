/* publish_snapshot.h -- build one snapshot slot from the live counters. */
#ifndef MT_SNAPSHOT_H
#define MT_SNAPSHOT_H

#include "publish_shm.h"
#include "publish_timeline.h"

#include <stdbool.h>

typedef struct mt_snapshot_state mt_snapshot_state;

mt_snapshot_state *mt_snapshot_state_new(uint32_t interval_ms);
/* A fork child's copy of its parent's state, before its first segment:
 * definitions and modules to publish again, its checkpoints and timeline
 * from now on. */
void mt_snapshot_state_reset_for_child(mt_snapshot_state *s);

void mt_snapshot_sync_modules(mt_snapshot_state *s, mt_shm_writer *w);

/* Publishes everything new (defs, modules) and one complete slot. */
void mt_snapshot_publish(mt_snapshot_state *s, mt_shm_writer *w);

#endif
