/* record_cull.h -- culled recordings (issue 19): blocks freed within a
 * lifetime threshold are not written as events but counted per trace
 * (CULLED records, dat_format.h); every block that outlives the threshold
 * is written with its original time, thread and trace.
 *
 * Writer thread, mt_w.lock held (except mt_cull_configure, called by the
 * recording control before a session begins).  The young blocks wait in a
 * bounded FIFO from mmap; when it is full, dead entries are compacted
 * away, and if it is still 3/4 full the oldest young blocks are written
 * early (exact, only a bigger file), counted in every CULLED record.
 */
#ifndef MT_RECORD_CULL_H
#define MT_RECORD_CULL_H

#include "dat_format.h"
#include "record_buffer.h"

#include <stdbool.h>
#include <stdint.h>

#define MT_CULL_BLOCKS_DEFAULT (1u << 18) /* young blocks kept at most */
#define MT_CULL_BLOCKS_MIN 16u
#define MT_CULL_GRACE_NS                                                                           \
    250000000ull /* a young block waits this much past the threshold                               \
                    for a free still in a ring */
_Static_assert(MT_CULL_GRACE_NS <= MT_DAT_CULL_LATE_NS, "young blocks written in time for readers");

/* Mode of the next session: culled with threshold_ms and at most
 * max_blocks young blocks (0: the default), or full (on false). */
void mt_cull_configure(bool on, uint64_t threshold_ms, uint32_t max_blocks);
bool mt_cull_on(void); /* this session is culled */
uint64_t mt_cull_threshold_ms(void);
uint32_t mt_cull_max_blocks(void);
/* A session begins: memory for a culled one.  False: no memory. */
bool mt_cull_begin(void);
/* The writer's view of one event of thread tid: true if it was culled or
 * kept young (nothing to write now); false: write it as is. */
bool mt_cull_event(uint32_t tid, const mt_rec_event *e);
/* Young blocks older than the threshold (+ grace) at now are written. */
void mt_cull_expire(uint64_t now);
/* The per-trace counts of culled blocks since the last one: a CULLED
 * record (none if there is nothing new). */
void mt_cull_write_deltas(uint64_t now);
/* The end: every young block written, then the deltas. */
void mt_cull_flush_all(uint64_t now);
void mt_cull_child_reset(void);
void mt_cull_release(void); /* a session ended: its FIFO and index unmapped */

/* record_cull_config.c.  The environment's values (NULL: unset) for
 * MEMTOP_RECORD (warnings for bad ones). */
void mt_cull_env(const char *mode, const char *secs, const char *blocks);
/* A control start argument: "cull[=SECS] PATH" or "PATH"; the mode is set
 * and PATH returned, or NULL for a bad prefix. */
const char *mt_cull_cmd(const char *arg);

/* record_events.c: writes one event of thread tid at its own time. */
void mt_rr_encode_one(uint32_t tid, const mt_rec_event *e);

#endif
