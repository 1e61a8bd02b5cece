/* shm_defs.c -- parsing the trace definition records (see shm_defs.h).
 * Each record is copied out of the mapping under the guard (shm_guard.h)
 * before it is checked: a file that shrinks is an error, not a SIGBUS. */
#include "shm_defs.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "shm_guard.h"

void mt_defs_init(mt_defs *d)
{
    memset(d, 0, sizeof *d);
}

void mt_defs_free(mt_defs *d)
{
    free(d->items);
    free(d->frames);
    mt_defs_init(d);
}

static mt_errc parse_one(mt_defs *d, const mt_segment *seg, const unsigned char *p, uint64_t rem,
                         uint64_t *len, mt_err *err)
{
    mt_shm_def def;
    if (rem < sizeof def)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt definitions: record %zu cut short", d->count);
    mt_errc rc = mt_segment_copy(seg, &def, p, sizeof def, err);
    if (rc)
        return rc;
    if (def.id != d->count)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt definitions: record %zu has id %u", d->count,
                          def.id);
    if (def.nframes > MT_MAX_DEPTH || mt_def_bytes(def.nframes) > rem)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt definitions: trace %u has %u frames", def.id,
                          def.nframes);
    uint64_t frames[MT_MAX_DEPTH];
    rc = mt_segment_copy(seg, frames, p + sizeof def, def.nframes * sizeof(uint64_t), err);
    if (rc)
        return rc;
    mt_def_info info = {def.hash, def.first_seen_ns, 0, def.nframes, def.flags};
    *len = mt_def_bytes(def.nframes);
    return mt_defs_push(d, &info, frames, err);
}

mt_errc mt_defs_push(mt_defs *d, const mt_def_info *info, const uint64_t *frames, mt_err *err)
{
    if (mt_grow((void **)&d->items, &d->cap, d->count + 1, sizeof *d->items) ||
        mt_grow((void **)&d->frames, &d->frames_cap, d->nframes + info->nframes, sizeof(uint64_t)))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for trace definitions");
    if (info->nframes)
        memcpy(d->frames + d->nframes, frames, info->nframes * sizeof(uint64_t));
    d->items[d->count] = *info;
    d->items[d->count++].frames_at = d->nframes;
    d->nframes += info->nframes;
    return MT_OK;
}

mt_errc mt_defs_update(mt_defs *d, const mt_segment *seg, mt_err *err)
{
    const mt_shm_header *h = mt_segment_header(seg);
    uint64_t count, used;
    mt_errc rc = mt_segment_load64(seg, &h->defs_count, &count, err);
    if (!rc)
        rc = mt_segment_load64(seg, &h->defs_used, &used, err);
    if (rc)
        return rc;
    if (used > seg->lay.defs_cap || used < d->parsed_bytes)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt definitions: defs_used %llu",
                          (unsigned long long)used);
    const unsigned char *base = seg->base + seg->lay.defs_off;
    while (d->parsed_bytes < used) {
        uint64_t len = 0;
        rc = parse_one(d, seg, base + d->parsed_bytes, used - d->parsed_bytes, &len, err);
        if (rc)
            return rc;
        d->parsed_bytes += len;
    }
    if (count > d->count + 1) /* a count may lead defs_used by one record */
        return mt_err_set(err, MT_E_CORRUPT, "corrupt definitions: %llu counted, %zu present",
                          (unsigned long long)count, d->count);
    return MT_OK;
}

const uint64_t *mt_defs_frames(const mt_defs *d, uint32_t id, unsigned *nframes)
{
    if (id >= d->count) {
        *nframes = 0;
        return NULL;
    }
    static const uint64_t none[1];
    *nframes = d->items[id].nframes;
    return *nframes ? d->frames + d->items[id].frames_at : none;
}
