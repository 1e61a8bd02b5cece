/* shm_recording.c -- read and describe the recording status of a target
 * (header.recording): validated like every other byte of the segment, and
 * read under the guard (shm_guard.h) like every other byte of the mapping. */
#include "shm_recording.h"

#include <stdio.h>
#include <string.h>

#include "dat_lost.h"
#include "shm_guard.h"

mt_errc mt_segment_recording(const mt_segment *seg, mt_shm_recording *out, mt_err *err)
{
    const mt_shm_header *h = mt_segment_header(seg);
    const mt_shm_recording *r = &h->recording;
    uint32_t state;
    mt_errc rc = mt_segment_load32(seg, &r->state, &state, err);
    if (!rc)
        rc = mt_segment_copy(seg, out, r, sizeof *out, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->state = state;
    if (state > MT_REC_STATE_FAILED)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: recording state %u", state);
    if (!memchr(out->path, '\0', sizeof out->path) ||
        !memchr(out->message, '\0', sizeof out->message))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: unterminated recording path");
    return MT_OK;
}

mt_errc mt_segment_recording_why(const mt_segment *seg, uint64_t why[MT_REC_WHY_MAX], mt_err *err)
{
    const mt_shm_header *h = mt_segment_header(seg);
    mt_errc rc = mt_segment_copy(seg, why, h->rec_dropped_why, sizeof h->rec_dropped_why, err);
    if (rc)
        memset(why, 0, sizeof h->rec_dropped_why);
    return rc;
}

void mt_recording_dropped_why(const mt_shm_recording *r, const uint64_t *why,
                              uint64_t w[MT_DAT_LOST_WHY_N])
{
    memset(w, 0, MT_DAT_LOST_WHY_N * sizeof w[0]);
    uint64_t sum = 0;
    for (unsigned i = 0; why && i < MT_REC_WHY_MAX; i++) { /* untrusted: any value */
        uint64_t *to = &w[i < MT_DAT_LOST_CAUSES ? i : MT_DAT_LOST_OTHER];
        *to = mt_dat_lost_add(*to, why[i]);
        sum = mt_dat_lost_add(sum, why[i]);
    }
    if (r->events_dropped > sum)
        w[MT_DAT_LOST_NOT_SAID] = r->events_dropped - sum;
}

char *mt_recording_dropped(const mt_shm_recording *r, const uint64_t *why, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!r->events_dropped)
        return buf;
    uint64_t w[MT_DAT_LOST_WHY_N];
    mt_recording_dropped_why(r, why, w);
    return mt_dat_lost_line(r->events_dropped, w, buf, n);
}

/* " (recording inexact: N events dropped[: causes])" into out. */
static void dropped_note(const mt_shm_recording *r, const uint64_t *why, char *out, size_t cap)
{
    char line[MT_DAT_LOST_LINE_MAX];
    snprintf(out, cap, " (recording inexact: %s)", mt_recording_dropped(r, why, line, sizeof line));
}

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    if (b < 10000)
        snprintf(out, cap, "%llu B", (unsigned long long)b);
    else if (b < 10000ull << 10)
        snprintf(out, cap, "%.1f KiB", (double)b / 1024.0);
    else if (b < 10000ull << 20)
        snprintf(out, cap, "%.1f MiB", (double)b / 1048576.0);
    else
        snprintf(out, cap, "%.1f GiB", (double)b / 1073741824.0);
}

void mt_recording_line(const mt_shm_recording *r, const uint64_t *why, char *out, unsigned cap)
{
    char size[32], note[300] = "";
    human_bytes(r->bytes_written, size, sizeof size);
    /* A culled recording's status message says so: "recording, culled <10.000 s". */
    const char *c = strstr(r->message, "culled <");
    int ncull = 0;
    while (c && c[ncull] && c[ncull] != ';' && ncull < 32)
        ncull++;
    switch (r->state) {
    case MT_REC_STATE_ON:
        if (r->events_dropped)
            dropped_note(r, why, note, sizeof note);
        snprintf(out, cap, "REC %s %s%s%.*s%s", r->path, size, c ? " " : "", ncull, c ? c : "",
                 note);
        break;
    case MT_REC_STATE_STOPPED:
        snprintf(out, cap, "recorded %s (%s)", r->path, size);
        break;
    case MT_REC_STATE_FAILED:
        snprintf(out, cap, "recording failed: %s", r->message);
        break;
    default:
        snprintf(out, cap, "not recording");
        break;
    }
}
