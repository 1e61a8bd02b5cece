/* shm_defs.h -- trace definitions (id -> frames), parsed incrementally out
 * of the append-only defs region into private memory. */
#ifndef MEMTOP_SHM_DEFS_H
#define MEMTOP_SHM_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include "shm_segment.h"

typedef struct mt_def_info {
    uint64_t hash;
    uint64_t first_seen_ns;
    size_t frames_at; /* index of the first frame in mt_defs.frames */
    uint16_t nframes;
    uint16_t flags; /* MT_DEF_* */
} mt_def_info;

typedef struct mt_defs {
    mt_def_info *items; /* items[id] */
    size_t count, cap;
    uint64_t *frames;
    size_t nframes, frames_cap;
    uint64_t parsed_bytes; /* of the defs region */
} mt_defs;

void mt_defs_init(mt_defs *d);
void mt_defs_free(mt_defs *d);

/* Parse the records appended since the last call.  Each record's size,
 * depth (<= MT_MAX_DEPTH) and id (dense, in order) is validated. */
mt_errc mt_defs_update(mt_defs *d, const mt_segment *seg, mt_err *err);

/* Append the next definition (id d->count): info's frames_at is ignored;
 * nframes <= MT_MAX_DEPTH is the caller's to check. */
mt_errc mt_defs_push(mt_defs *d, const mt_def_info *info, const uint64_t *frames, mt_err *err);

/* Frames of trace id (innermost first), or NULL if id is unknown. */
const uint64_t *mt_defs_frames(const mt_defs *d, uint32_t id, unsigned *nframes);

#endif
