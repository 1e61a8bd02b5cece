/* shm_recording.c -- read and describe the recording status of a target
 * (header.recording and its dropped events by cause, rec_dropped_why):
 * read as one set under the header's seqlock (rec_seq), validated like
 * every other byte of the segment, and read under the guard (shm_guard.h)
 * like every other byte of the mapping. */
#include "shm_recording.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dat_lost.h"
#include "shm_guard.h"

/* Bounded retries of the seqlock read: the publisher's write of the status
 * takes microseconds, but it may be preempted in the middle, or have died
 * there (seq odd for ever): the first tries come at once, the rest after a
 * nap, in all at most ~TRIES * NAP_NS (10 ms), then "not known". */
#define TRIES 64
#define TRIES_AT_ONCE 4
#define NAP_NS 150000L

typedef struct rec_read {
    const mt_shm_header *h;
    mt_shm_recording out;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info lease; /* header.rec_lease_ms, rec_end_reason (0 in an older target's) */
    uint64_t seq;            /* the even sequence the copy is consistent with; odd: retry */
} rec_read;

/* One seqlock read of the status and its causes, run under the SIGBUS
 * guard (docs/shm-protocol.md): only loads and copies. */
static void read_once(void *ctx)
{
    rec_read *r = ctx;
    uint64_t s1 = __atomic_load_n(&r->h->rec_seq, __ATOMIC_ACQUIRE);
    r->seq = 1;
    if (s1 & 1u)
        return;
    /* An older target stores state last with release: read it first. */
    uint32_t state = __atomic_load_n(&r->h->recording.state, __ATOMIC_ACQUIRE);
    memcpy(&r->out, &r->h->recording, sizeof r->out);
    memcpy(r->why, r->h->rec_dropped_why, sizeof r->why);
    r->lease.ms = r->h->rec_lease_ms;
    r->lease.end_reason = r->h->rec_end_reason;
    r->out.state = state;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->h->rec_seq, __ATOMIC_RELAXED) == s1)
        r->seq = s1;
}

static void nap(void)
{
    struct timespec ts = {0, NAP_NS};
    nanosleep(&ts, NULL);
}

/* A consistent copy into r: seq even and unchanged over the copy; for
 * seq 0 (an older target, which has no seqlock, or one that has not
 * published yet) two copies in a row that agree.  MT_E_BUSY when none came
 * within the retries. */
static mt_errc read_stable(const mt_segment *seg, rec_read *r, mt_err *err)
{
    rec_read prev;
    bool have_prev = false;
    for (int i = 0; i < TRIES; i++) {
        if (i >= TRIES_AT_ONCE)
            nap();
        mt_errc rc = mt_segment_guard(seg, read_once, r, err);
        if (rc)
            return rc;
        if (r->seq & 1u)
            continue;
        if (r->seq != 0)
            return MT_OK;
        if (have_prev && memcmp(&prev.out, &r->out, sizeof r->out) == 0 &&
            memcmp(prev.why, r->why, sizeof r->why) == 0 &&
            memcmp(&prev.lease, &r->lease, sizeof r->lease) == 0)
            return MT_OK;
        prev = *r;
        have_prev = true;
    }
    return mt_err_set(err, MT_E_BUSY,
                      "recording status not known: no stable read (the target is writing it, "
                      "or stopped while writing it)");
}

mt_errc mt_segment_recording_lease(const mt_segment *seg, mt_shm_recording *out,
                                   uint64_t why[MT_REC_WHY_MAX], mt_rec_lease_info *lease,
                                   mt_err *err)
{
    rec_read r = {.h = mt_segment_header(seg), .seq = 1};
    mt_errc rc = read_stable(seg, &r, err);
    if (lease)
        *lease = rc ? (mt_rec_lease_info){0, 0} : r.lease;
    if (rc) {
        memset(out, 0, sizeof *out);
        memset(why, 0, MT_REC_WHY_MAX * sizeof *why);
        return rc;
    }
    *out = r.out;
    memcpy(why, r.why, sizeof r.why);
    if (out->state > MT_REC_STATE_FAILED)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: recording state %u", out->state);
    if (!memchr(out->path, '\0', sizeof out->path) ||
        !memchr(out->message, '\0', sizeof out->message))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: unterminated recording path");
    return MT_OK;
}

mt_errc mt_segment_recording_why(const mt_segment *seg, mt_shm_recording *out,
                                 uint64_t why[MT_REC_WHY_MAX], mt_err *err)
{
    return mt_segment_recording_lease(seg, out, why, NULL, err);
}

mt_errc mt_segment_recording(const mt_segment *seg, mt_shm_recording *out, mt_err *err)
{
    uint64_t why[MT_REC_WHY_MAX];
    return mt_segment_recording_why(seg, out, why, err);
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
    if (sum > r->events_dropped) { /* not one set (an older target's): the causes are not known */
        memset(w, 0, MT_DAT_LOST_WHY_N * sizeof w[0]);
        sum = 0;
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

bool mt_recording_is_stream(const char *path)
{
    const char *file = strrchr(path, '/');
    if (!file || strcmp(file + 1, MT_STREAM_FILE) != 0)
        return false;
    const char *dir = file;
    while (dir > path && dir[-1] != '/')
        dir--;
    return strncmp(dir, MT_STREAM_DIR_PREFIX, strlen(MT_STREAM_DIR_PREFIX)) == 0;
}

void mt_recording_line(const mt_shm_recording *r, const uint64_t *why, char *out, unsigned cap)
{
    char size[32], note[300] = "";
    human_bytes(r->bytes_written, size, sizeof size);
    /* a stream's file was removed as soon as it was opened */
    const char *path = mt_recording_is_stream(r->path) ? "a stream (--record -)" : r->path;
    /* A culled recording's status message says so: "recording, culled <10.000 s". */
    const char *c = strstr(r->message, "culled <");
    int ncull = 0;
    while (c && c[ncull] && c[ncull] != ';' && ncull < 32)
        ncull++;
    switch (r->state) {
    case MT_REC_STATE_ON:
        if (r->events_dropped)
            dropped_note(r, why, note, sizeof note);
        snprintf(out, cap, "REC %s %s%s%.*s%s", path, size, c ? " " : "", ncull, c ? c : "", note);
        break;
    case MT_REC_STATE_STOPPED:
        snprintf(out, cap, "recorded %s (%s)", path, size);
        break;
    case MT_REC_STATE_FAILED:
        snprintf(out, cap, "recording failed: %s", r->message);
        break;
    default:
        snprintf(out, cap, "not recording");
        break;
    }
}
