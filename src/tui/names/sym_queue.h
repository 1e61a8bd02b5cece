/* sym_queue.h -- the background symbolizer's bounded request queue.  The
 * most recently requested record is worked on first (LIFO), so the rows on
 * screen get names before rows scrolled away long ago.  A request already
 * among the latest quarter of pushes is not pushed again (de-duplication);
 * an older one moves to the top (its old slot goes stale and is skipped).
 * When full, the oldest slot is dropped: its record is no longer queued, so
 * its next lookup asks again.  Not thread-safe: the worker's lock guards it. */
#ifndef MEMTOP_SYM_QUEUE_H
#define MEMTOP_SYM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sym_table.h"

typedef struct mt_symw_slot {
    mt_symw_entry *e;
    uint64_t seq; /* live while e->qseq == seq */
} mt_symw_slot;

typedef struct mt_symw_queue {
    mt_symw_slot *slots; /* ring; slots[top - 1] is the newest */
    size_t cap, top, len;
    size_t live;     /* records queued (slots that are not stale) */
    uint64_t pushed; /* sequence number of the latest push */
} mt_symw_queue;

/* cap >= 1 slots; false when out of memory. */
bool mt_symw_queue_init(mt_symw_queue *q, size_t cap);
void mt_symw_queue_free(mt_symw_queue *q);

/* Ask for e to be worked on soon (see above). */
void mt_symw_queue_request(mt_symw_queue *q, mt_symw_entry *e);

/* The most recently requested queued record, now no longer queued; NULL if
 * none. */
mt_symw_entry *mt_symw_queue_pop(mt_symw_queue *q);

#endif
