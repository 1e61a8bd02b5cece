/* test_rec_status.c -- the viewer's read of a target's recording status
 * (header.recording with its dropped events by cause, rec_dropped_why;
 * src/ipc/shm_recording.c): one set of figures that existed together, read
 * under the header's seqlock (rec_seq), never a torn one; a publisher that
 * stopped in the middle of a write (seq odd for ever) makes the read give
 * up, bounded, and say the status is not known; a segment without the
 * seqlock (an older target) is read as two copies in a row that agree,
 * and causes that add up to more than the total are not shown as causes.
 *
 * The header lives in ordinary memory here: the tests play the publisher
 * (src/preload/record/record_control.c, mt_rec_publish_status) step by
 * step, so the torn state is there for certain when the reader looks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "dat_lost.h"
#include "shm_recording.h"

typedef struct fixture {
    mt_shm_header *h;
    mt_segment seg;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->h = aligned_alloc(64, MT_HEADER_BYTES);
    memset(f->h, 0, MT_HEADER_BYTES);
    f->seg.base = (unsigned char *)f->h;
    f->seg.map_bytes = MT_HEADER_BYTES;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    free(f->h);
    free(f);
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The publisher's steps (mt_rec_publish_status's order): seq odd, the
 * total, the causes, the state, seq even. */
static void begin_write(mt_shm_header *h)
{
    __atomic_store_n(&h->rec_seq, h->rec_seq | 1u, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void end_write(mt_shm_header *h)
{
    __atomic_store_n(&h->recording.state, MT_REC_STATE_ON, __ATOMIC_RELEASE);
    __atomic_store_n(&h->rec_seq, h->rec_seq + 1, __ATOMIC_RELEASE);
}

static void publish(mt_shm_header *h, uint64_t disk, uint64_t cap)
{
    begin_write(h);
    h->recording.events_dropped = disk + cap;
    h->rec_dropped_why[MT_DAT_LOST_DISK] = disk;
    h->rec_dropped_why[MT_DAT_LOST_WAIT_CAP] = cap;
    strcpy(h->recording.path, "/r.dat");
    end_write(h);
}

static uint64_t sum(const uint64_t why[MT_REC_WHY_MAX])
{
    uint64_t n = 0;
    for (unsigned i = 0; i < MT_REC_WHY_MAX; i++)
        n += why[i];
    return n;
}

/* A publisher in the middle of a write: the new total (15) is there, its
 * causes not yet (4 + 6 of the previous set).  Read before the seqlock,
 * this showed "15 events dropped: disk behind 4, writer stalled 6, cause
 * not recorded 5", a set that never existed.  Now the read gives up after
 * its tries, in bounded time (a publisher that died there never ends the
 * write), and says the status is not known; once the write ends, the new
 * set is read whole. */
static void test_torn_write_never_read(void **state)
{
    fixture *f = *state;
    publish(f->h, 4, 6);
    mt_shm_recording rec;
    uint64_t why[MT_REC_WHY_MAX];
    mt_err err;
    assert_int_equal(mt_segment_recording_why(&f->seg, &rec, why, &err), MT_OK);
    assert_int_equal(rec.events_dropped, 10);
    assert_int_equal(sum(why), 10);

    begin_write(f->h);
    f->h->recording.events_dropped = 15; /* the causes' stores come next */
    uint64_t t0 = now_ns();
    mt_errc rc = mt_segment_recording_why(&f->seg, &rec, why, &err);
    uint64_t took = now_ns() - t0;
    assert_int_equal(rc, MT_E_BUSY);
    assert_non_null(strstr(err.msg, "not known"));
    assert_int_equal(rec.events_dropped, 0); /* nothing of the torn set is handed out */
    assert_int_equal(sum(why), 0);
    assert_true(took < 2000000000ull); /* bounded: ~10 ms, slack for a loaded machine */
    assert_int_equal(mt_segment_recording(&f->seg, &rec, &err), MT_E_BUSY);

    f->h->rec_dropped_why[MT_DAT_LOST_DISK] = 9;
    end_write(f->h);
    assert_int_equal(mt_segment_recording_why(&f->seg, &rec, why, &err), MT_OK);
    assert_int_equal(rec.events_dropped, 15);
    assert_int_equal(why[MT_DAT_LOST_DISK], 9);
    assert_int_equal(why[MT_DAT_LOST_WAIT_CAP], 6);
    char line[MT_DAT_LOST_LINE_MAX];
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "15 events dropped: disk behind 9, writer stalled (wait cap) 6");
}

/* An older target has no seqlock (rec_seq stays 0): a stable status reads
 * as before; causes that add up to more than the total (its publisher read
 * them apart) are no set that existed: not shown as causes. */
static void test_older_target(void **state)
{
    fixture *f = *state;
    f->h->recording.state = MT_REC_STATE_ON;
    f->h->recording.events_dropped = 9;
    f->h->rec_dropped_why[MT_DAT_LOST_DISK] = 3;
    f->h->rec_dropped_why[MT_DAT_LOST_WAIT_CAP] = 6;
    strcpy(f->h->recording.path, "/r.dat");
    mt_shm_recording rec;
    uint64_t why[MT_REC_WHY_MAX];
    mt_err err;
    assert_int_equal(mt_segment_recording_why(&f->seg, &rec, why, &err), MT_OK);
    char line[MT_DAT_LOST_LINE_MAX];
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "9 events dropped: disk behind 3, writer stalled (wait cap) 6");
    why[MT_DAT_LOST_DISK] = 5; /* 11 causes for 9 events */
    assert_string_equal(mt_recording_dropped(&rec, why, line, sizeof line),
                        "9 events dropped: cause not recorded 9");
    /* a state beyond those known is still corrupt, whatever the seqlock */
    f->h->recording.state = 7;
    assert_int_equal(mt_segment_recording_why(&f->seg, &rec, why, &err), MT_E_CORRUPT);
}

/* A publisher writing all the time (each set's causes add up to its
 * total, the total only grows): every read that succeeds is one set. */
typedef struct writer_ctx {
    mt_shm_header *h;
    _Atomic int stop;
} writer_ctx;

static void *writer(void *arg)
{
    writer_ctx *w = arg;
    for (uint64_t k = 1; !atomic_load(&w->stop); k++)
        publish(w->h, k, 2 * k);
    return NULL;
}

static void test_concurrent_reads_are_sets(void **state)
{
    fixture *f = *state;
    publish(f->h, 0, 0);
    writer_ctx w = {f->h, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &w), 0);
    unsigned ok = 0;
    uint64_t last = 0;
    for (int i = 0; i < 20000; i++) {
        mt_shm_recording rec;
        uint64_t why[MT_REC_WHY_MAX];
        mt_err err;
        mt_errc rc = mt_segment_recording_why(&f->seg, &rec, why, &err);
        if (rc == MT_E_BUSY)
            continue; /* the writer was preempted mid-write for ~10 ms: allowed */
        assert_int_equal(rc, MT_OK);
        assert_int_equal(sum(why), rec.events_dropped);
        assert_int_equal(why[MT_DAT_LOST_WAIT_CAP], 2 * why[MT_DAT_LOST_DISK]);
        assert_true(rec.events_dropped >= last);
        last = rec.events_dropped;
        ok++;
    }
    atomic_store(&w.stop, 1);
    pthread_join(t, NULL);
    assert_true(ok > 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_torn_write_never_read),
        T(test_older_target),
        T(test_concurrent_reads_are_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
