/* segmap.h -- map a memtop segment read-only and copy out one consistent
 * snapshot, independently of src/ipc, so that the pitfall tests can check
 * what libmemtop.so published even without the memtop CLI.
 */
#ifndef MTP_SEGMAP_H
#define MTP_SEGMAP_H

#include "shm_layout.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mtp_seg {
    const unsigned char *base;
    size_t size;
    const mt_shm_header *hdr;
} mtp_seg;

/* A snapshot copied out of a slot: slot header, then traces. */
typedef struct mtp_snap {
    mt_shm_slot slot;
    mt_shm_trace *traces; /* slot.ntraces records, malloc'd */
    uint64_t *def_offs;   /* offset of def i in the segment, malloc'd */
    uint64_t ndefs;
} mtp_snap;

/* Each returns 0 or prints a one-line error to stderr and returns -1. */
int mtp_seg_open(const char *path, mtp_seg *seg);
void mtp_seg_close(mtp_seg *seg);
/* Returns 1 when no snapshot has been published yet. */
int mtp_seg_snapshot(const mtp_seg *seg, mtp_snap *snap);
void mtp_snap_free(mtp_snap *snap);

const mt_shm_def *mtp_seg_def(const mtp_seg *seg, const mtp_snap *snap, uint32_t id);
/* The newest module record containing addr, or NULL. */
const mt_shm_module *mtp_seg_module(const mtp_seg *seg, uint64_t addr);

static inline uint64_t mtp_load_acq(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

#endif
