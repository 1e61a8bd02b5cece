/* reader_exercise.c -- whole-reader driver with invariant checks (see
 * reader_exercise.h). */
#include "reader_exercise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void require(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "reader invariant broken: %s\n", what);
        abort();
    }
}

static void check_snapshot(const mt_segment *seg, const mt_snapshot *s)
{
    uint64_t cap = seg->lay.slot_cap[s->slot_index];
    require(s->slot_index < MT_SLOTS, "slot index");
    require(s->slot.ntimeline <= MT_TIMELINE_POINTS, "ntimeline bound");
    require(sizeof(mt_shm_slot) + s->slot.ntimeline * sizeof(mt_shm_point) +
                    s->slot.ntraces * sizeof(mt_shm_trace) <=
                cap,
            "slot fits its capacity");
    uint64_t sum = 0; /* touch every copied byte, so ASan checks it */
    for (uint32_t i = 0; i < s->slot.ntimeline; i++)
        sum += s->timeline[i].live_bytes;
    for (uint64_t i = 0; i < s->slot.ntraces; i++) {
        require(s->traces[i].id < s->slot.defs_count, "trace id < defs_count");
        sum += s->traces[i].live_bytes;
    }
    __asm__ volatile("" : : "r"(sum));
}

static void check_frames(const mt_defs *d, const mt_modules *m, const mt_snapshot *s)
{
    for (uint64_t i = 0; i < s->slot.ntraces; i++) {
        unsigned n;
        const uint64_t *fr = mt_defs_frames(d, s->traces[i].id, &n);
        if (!fr)
            continue; /* the view rejects this case; the reader reports it */
        require(n <= MT_MAX_DEPTH, "depth bound");
        for (unsigned j = 0; j < n; j++) {
            const mt_module_info *mod = mt_modules_find(m, fr[j]);
            require(!mod || (mod->start <= fr[j] && fr[j] < mod->end), "module contains addr");
            require(!mod || strlen(mod->path) < MT_PATH_MAX, "module path terminated");
        }
    }
}

static void require_clean(mt_errc rc, const mt_err *err)
{
    require(rc <= MT_E_GONE, "error code range");
    require(rc == MT_OK || strlen(err->msg) > 0, "an error has a message");
}

/* Never part of the result: the synthetic target does not answer. */
static void exercise_side(mt_segment *seg)
{
    mt_err err;
    mt_shm_recording rec;
    mt_errc rc = mt_segment_recording(seg, &rec, &err);
    require_clean(rc, &err);
    require(rc || rec.state <= MT_REC_STATE_FAILED, "recording state bound");
    mt_shm_allocators al;
    rc = mt_segment_allocators(seg, &al, &err);
    require_clean(rc, &err);
    mt_ctrl_reply reply;
    rc = mt_control_send(seg, MT_CMD_PING, "x", 0, &reply, &err);
    require_clean(rc, &err);
}

static mt_errc exercise_open(mt_segment *seg)
{
    mt_snapshot s;
    mt_defs d;
    mt_modules m;
    mt_defs_init(&d);
    mt_modules_init(&m);
    mt_state st = mt_segment_state(seg);
    require(st <= MT_STATE_STALE, "state value");
    mt_err err;
    mt_errc rc = mt_snapshot_read(seg, 0, &s, &err);
    require_clean(rc, &err);
    if (rc == MT_OK)
        check_snapshot(seg, &s);
    mt_errc rc2 = mt_defs_update(&d, seg, &err);
    require_clean(rc2, &err);
    mt_errc rc3 = mt_modules_update(&m, seg, &err);
    require_clean(rc3, &err);
    if (rc == MT_OK && rc2 == MT_OK && rc3 == MT_OK)
        check_frames(&d, &m, &s);
    if (rc == MT_OK)
        mt_snapshot_free(&s);
    exercise_side(seg);
    mt_defs_free(&d);
    mt_modules_free(&m);
    return rc ? rc : rc2 ? rc2 : rc3;
}

mt_errc mt_exercise_shrunk(int fd, const char *path, uint64_t shrink_to)
{
    mt_segment seg;
    mt_err err;
    mt_errc rc = fd >= 0 ? mt_segment_open_fd(&seg, fd, true, "fuzz", &err)
                         : mt_segment_open_path(&seg, path, &err);
    require_clean(rc, &err);
    if (rc)
        return rc;
    require(seg.lay.size <= seg.map_bytes, "layout within the file");
    if (shrink_to < seg.map_bytes && ftruncate(seg.fd, (off_t)shrink_to) != 0) {
        perror("ftruncate");
        abort();
    }
    rc = exercise_open(&seg);
    mt_segment_close(&seg);
    return rc;
}

mt_errc mt_exercise_reader(int fd, const char *path)
{
    return mt_exercise_shrunk(fd, path, UINT64_MAX);
}
