/* shm_snapshot.h -- reading one consistent snapshot out of the slots.
 *
 * The slot is copied into private memory under the seqlock protocol of
 * shm_layout.h, so a snapshot is never torn and stays valid after the
 * target writes the slot again. */
#ifndef MEMTOP_SHM_SNAPSHOT_H
#define MEMTOP_SHM_SNAPSHOT_H

#include "shm_segment.h"

typedef struct mt_snapshot {
    mt_shm_slot slot;       /* the slot header (totals, counts, checkpoints) */
    mt_shm_point *timeline; /* slot.ntimeline points, or NULL */
    mt_shm_trace *traces;   /* slot.ntraces records, or NULL */
    unsigned slot_index;
    uint32_t flags; /* header flags loaded after the copy */
    /* When totals.allocator_* were taken, in slot.t_ns's clock (the
     * header's allocator_at_ns, loaded after the copy; a replay's from its
     * TOTALS); 0: with the slot. */
    uint64_t allocator_at_ns;
    /* When the process figures of totals (rss_bytes, tracker_bytes,
     * thread_count, unknown_free_count...) were taken, in slot.t_ns's
     * clock: a replay's newest TOTALS at or before the cursor, while its
     * live bytes are the cursor's; 0: with the slot (a live target). */
    uint64_t totals_at_ns;
} mt_snapshot;

/* How old the snapshot's process figures (RSS...) are, in ns: 0 when taken
 * with it (see totals_at_ns). */
static inline uint64_t mt_snapshot_totals_age_ns(const mt_snapshot *s)
{
    uint64_t at = s->totals_at_ns, t = s->slot.t_ns;
    return at && at < t ? t - at : 0;
}

/* How old the snapshot's allocator figures are, in ns: MT_UNKNOWN when
 * the figures are; 0 when taken with it or when the time given is not
 * before the slot's (a foreign value). */
static inline uint64_t mt_snapshot_allocator_age_ns(const mt_snapshot *s)
{
    uint64_t at = s->allocator_at_ns, t = s->slot.t_ns;
    if (s->slot.totals.allocator_bytes == MT_UNKNOWN)
        return MT_UNKNOWN;
    return at && at < t ? t - at : 0;
}

enum {
    MT_SNAP_TOTALS_ONLY = 1u << 0, /* copy the slot header only */
};

/* Newest consistent snapshot: the latest slot, else the older ones.  A slot
 * stuck mid-write is skipped.  Checks ntraces/ntimeline against the slot's
 * capacity and every trace id against the slot's defs_count. */
mt_errc mt_snapshot_read(const mt_segment *seg, unsigned opts, mt_snapshot *out, mt_err *err);

void mt_snapshot_free(mt_snapshot *snap);

#endif
