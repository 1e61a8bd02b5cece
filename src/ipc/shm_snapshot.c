/* shm_snapshot.c -- the reader half of the slot seqlock.
 *
 * s1 = seq (acquire); skip if odd; copy out; acquire fence; s2 = seq
 * (relaxed); the copy is valid iff s1 == s2.  Only a stable copy is ever
 * validated as "corrupt"; an unstable one is simply retried.  Every load
 * and copy from the mapping is guarded (shm_guard.h): a file that shrinks
 * under the copy ends the read with MT_E_TRUNCATED, never a SIGBUS. */
#include "shm_snapshot.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shm_guard.h"

#define SNAP_ROUNDS 50
#define SNAP_PAUSE_NS 1000000L

typedef enum slot_result { SLOT_OK, SLOT_EMPTY, SLOT_BUSY, SLOT_BAD } slot_result;

static slot_result check_sizes(const mt_shm_slot *s, uint64_t cap, mt_err *err)
{
    uint64_t room = cap - sizeof *s;
    uint64_t tl = (uint64_t)s->ntimeline * sizeof(mt_shm_point);
    if (s->ntimeline > MT_TIMELINE_POINTS || tl > room) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt snapshot: %u timeline points", s->ntimeline);
        return SLOT_BAD;
    }
    if (s->ntraces > (room - tl) / sizeof(mt_shm_trace)) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt snapshot: %llu traces do not fit the slot",
                   (unsigned long long)s->ntraces);
        return SLOT_BAD;
    }
    return SLOT_OK;
}

static slot_result copy_payload(const mt_segment *seg, const unsigned char *p, unsigned opts,
                                mt_snapshot *out, mt_err *err)
{
    if (opts & MT_SNAP_TOTALS_ONLY)
        return SLOT_OK;
    size_t tl = (size_t)out->slot.ntimeline * sizeof(mt_shm_point);
    size_t tr = (size_t)out->slot.ntraces * sizeof(mt_shm_trace);
    out->timeline = malloc(tl ? tl : 1);
    out->traces = malloc(tr ? tr : 1);
    if (!out->timeline || !out->traces) {
        mt_err_set(err, MT_E_NOMEM, "out of memory for a snapshot of %llu traces",
                   (unsigned long long)out->slot.ntraces);
        return SLOT_BAD;
    }
    if (mt_segment_copy(seg, out->timeline, p + sizeof out->slot, tl, err) ||
        mt_segment_copy(seg, out->traces, p + sizeof out->slot + tl, tr, err))
        return SLOT_BAD;
    return SLOT_OK;
}

static slot_result check_contents(const mt_segment *seg, const mt_snapshot *s, mt_err *err)
{
    const mt_shm_header *h = mt_segment_header(seg);
    uint64_t dcount, mcount;
    if (mt_segment_load64(seg, &h->defs_count, &dcount, err) ||
        mt_segment_load64(seg, &h->modules_count, &mcount, err))
        return SLOT_BAD;
    if (s->slot.defs_count > dcount || s->slot.modules_count > mcount) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt snapshot: it names %llu traces, %llu defined",
                   (unsigned long long)s->slot.defs_count, (unsigned long long)dcount);
        return SLOT_BAD;
    }
    for (uint64_t i = 0; s->traces && i < s->slot.ntraces; i++) {
        if (s->traces[i].id >= s->slot.defs_count) {
            mt_err_set(err, MT_E_CORRUPT, "corrupt snapshot: trace id %u >= %llu definitions",
                       s->traces[i].id, (unsigned long long)s->slot.defs_count);
            return SLOT_BAD;
        }
    }
    return SLOT_OK;
}

static slot_result read_slot(const mt_segment *seg, unsigned i, unsigned opts, mt_snapshot *out,
                             mt_err *err)
{
    const uint64_t *seqp = &mt_segment_header(seg)->slots[i].seq;
    uint64_t s1, s2;
    if (mt_segment_load64(seg, seqp, &s1, err))
        return SLOT_BAD;
    if (s1 == 0)
        return SLOT_EMPTY;
    if (s1 & 1)
        return SLOT_BUSY;
    const unsigned char *p = seg->base + seg->lay.slot_off[i];
    if (mt_segment_copy(seg, &out->slot, p, sizeof out->slot, err))
        return SLOT_BAD;
    slot_result r = check_sizes(&out->slot, seg->lay.slot_cap[i], err);
    if (r == SLOT_OK)
        r = copy_payload(seg, p, opts, out, err);
    if (r == SLOT_BAD && err->code == MT_E_TRUNCATED)
        return SLOT_BAD;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (mt_segment_load64(seg, seqp, &s2, err)) /* acquire: stronger than needed */
        return SLOT_BAD;
    if (s1 != s2)
        return SLOT_BUSY;
    if (r != SLOT_OK)
        return r;
    out->slot_index = i;
    return check_contents(seg, out, err);
}

/* One pass over the slots, newest first.  SLOT_OK, SLOT_BAD (stop), or
 * SLOT_BUSY / SLOT_EMPTY when nothing was readable. */
static slot_result read_pass(const mt_segment *seg, unsigned opts, mt_snapshot *out, mt_err *err)
{
    uint32_t latest;
    if (mt_segment_load32(seg, &mt_segment_header(seg)->latest_slot, &latest, err))
        return SLOT_BAD;
    if (latest >= MT_SLOTS) {
        mt_err_set(err, MT_E_CORRUPT, "corrupt segment: latest_slot %u", latest);
        return SLOT_BAD;
    }
    slot_result worst = SLOT_EMPTY;
    for (unsigned k = 0; k < MT_SLOTS; k++) {
        unsigned i = (latest + MT_SLOTS - k) % MT_SLOTS;
        slot_result r = read_slot(seg, i, opts, out, err);
        if (r == SLOT_OK || r == SLOT_BAD)
            return r;
        mt_snapshot_free(out);
        if (r == SLOT_BUSY)
            worst = SLOT_BUSY;
    }
    return worst;
}

/* No snapshot yet: MT_E_EMPTY, or MT_E_FULL with the reason when the
 * target could not grow its file to publish one. */
static mt_errc empty(const mt_segment *seg, mt_err *err)
{
    char why[128];
    if (mt_segment_grow_error(seg, why, sizeof why))
        return mt_err_set(err, MT_E_FULL, "no snapshot published: %s", why);
    return mt_err_set(err, MT_E_EMPTY, "no snapshot published yet");
}

mt_errc mt_snapshot_read(const mt_segment *seg, unsigned opts, mt_snapshot *out, mt_err *err)
{
    mt_err local;
    if (!err)
        err = &local;
    memset(out, 0, sizeof *out);
    mt_errc rc = mt_segment_check_size(seg, err);
    if (rc)
        return rc;
    for (int round = 0; round < SNAP_ROUNDS; round++) {
        slot_result r = read_pass(seg, opts, out, err);
        const mt_shm_header *h = mt_segment_header(seg);
        if (r == SLOT_OK && mt_segment_load32(seg, &h->flags, &out->flags, err) == MT_OK &&
            mt_segment_load64(seg, &h->allocator_at_ns, &out->allocator_at_ns, err) == MT_OK)
            return MT_OK;
        if (r == SLOT_OK)
            r = SLOT_BAD;
        if (r == SLOT_BAD) {
            mt_snapshot_free(out);
            return err->code;
        }
        if (r == SLOT_EMPTY)
            return empty(seg, err);
        struct timespec ts = {0, SNAP_PAUSE_NS};
        nanosleep(&ts, NULL);
    }
    return mt_err_set(err, MT_E_BUSY, "no consistent snapshot (the writer is always busy)");
}

void mt_snapshot_free(mt_snapshot *snap)
{
    free(snap->timeline);
    free(snap->traces);
    snap->timeline = NULL;
    snap->traces = NULL;
}
