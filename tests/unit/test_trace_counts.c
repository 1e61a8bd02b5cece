/* test_trace_counts.c -- a trace's counters are read whole while hooks of
 * other threads update them (src/preload/table/table_trace.h, "Updates and
 * reads"; table_trace.c), compiled on their own.
 *
 * What is checked: writer threads hammer one trace with allocations and
 * frees of one fixed size (some temporary, some taken back as a failed
 * insert would) while the main thread reads it without pause; every read
 * must hold whole events only: free_bytes = free_count * SIZE, live_bytes =
 * (alloc_count - free_count) * SIZE, temp_bytes = temp_count * SIZE, peak
 * >= live.  Before the counters had a lock, a read loaded them one by one
 * and saw half an event (free_bytes one block ahead of free_count: the
 * rare failure of recording_writer_stop).  Then: a section that a fork cut
 * (its thread does not exist in the child) is unlocked by the child's
 * repair, with no count negative.
 *
 * No TSan variant in the build: gcc's ThreadSanitizer does not model
 * atomic_thread_fence (-Wtsan), on which the seqlock's argument rests.  Built
 * by hand with -fsanitize=thread it reports no race (every access is atomic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>

#include "table_trace.h"

#define SIZE 48u
#define WRITERS 3
#define READS 1000000ul  /* reads at least, while the writers run */
#define EVENTS 1000000ul /* allocations the writers make meanwhile, at least */
#define KEEP 4u          /* blocks each writer keeps live */

static mt_trace g_trace; /* the hammered trace (not in the table: it needs none) */
static atomic_bool g_stop;
static atomic_int g_started; /* writers running */
static atomic_ulong g_kept;  /* allocations not taken back, all writers */

static void *writer(void *arg)
{
    (void)arg;
    unsigned live = 0;
    unsigned long kept = 0, i = 0;
    atomic_fetch_add_explicit(&g_started, 1, memory_order_relaxed);
    for (; !atomic_load_explicit(&g_stop, memory_order_relaxed); i++) {
        mt_trace_count_alloc(&g_trace, 1, SIZE);
        if (i % 997 == 0) { /* an insert that failed: taken back */
            mt_trace_uncount_alloc(&g_trace, 1, SIZE);
            continue;
        }
        kept++;
        if (live < KEEP) {
            live++;
            continue;
        }
        mt_trace_count_free(&g_trace, 1, SIZE, i & 1);
    }
    for (; live; live--)
        mt_trace_count_free(&g_trace, 1, SIZE, false);
    atomic_fetch_add_explicit(&g_kept, kept, memory_order_relaxed);
    return NULL;
}

/* Whether c holds whole events of SIZE bytes only. */
static bool whole(const mt_trace_counts *c)
{
    return c->alloc_count >= c->free_count && c->free_bytes == c->free_count * SIZE &&
           c->live_bytes == (c->alloc_count - c->free_count) * SIZE &&
           c->temp_bytes == c->temp_count * SIZE && c->temp_count <= c->free_count &&
           c->peak_live_bytes >= c->live_bytes;
}

static void reads_hold_whole_events(void **state)
{
    (void)state;
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, writer, NULL), 0);
    unsigned long reads = 0, torn = 0;
    mt_trace_counts c, first_torn = {0};
    while (atomic_load_explicit(&g_started, memory_order_relaxed) < WRITERS)
        sched_yield(); /* reads while all of them write, not before */
    for (c.alloc_count = 0; reads < READS || c.alloc_count < EVENTS; reads++) {
        mt_trace_read(&g_trace, &c);
        if (!whole(&c) && !torn++)
            first_torn = c;
    }
    atomic_store_explicit(&g_stop, true, memory_order_relaxed);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    if (torn)
        printf("torn: %lu of %lu reads; first: alloc %llu free %llu free_bytes %llu live_bytes "
               "%llu temp %llu/%llu\n",
               torn, reads, (unsigned long long)first_torn.alloc_count,
               (unsigned long long)first_torn.free_count, (unsigned long long)first_torn.free_bytes,
               (unsigned long long)first_torn.live_bytes, (unsigned long long)first_torn.temp_count,
               (unsigned long long)first_torn.temp_bytes);
    assert_int_equal(torn, 0);
    /* And the end state is exact: every allocation kept was freed. */
    mt_trace_read(&g_trace, &c);
    assert_true(whole(&c));
    assert_int_equal(c.live_bytes, 0);
    assert_int_equal(c.alloc_count, c.free_count);
    assert_int_equal(c.alloc_count, atomic_load_explicit(&g_kept, memory_order_relaxed));
}

static void fork_cut_section_is_repaired(void **state)
{
    (void)state;
    assert_true(mt_traces_init(1024));
    mt_trace *t = mt_trace_get(MT_TRACE_OVERFLOW);
    mt_trace_count_alloc(t, 1, SIZE);
    mt_trace_count_alloc(t, 1, SIZE);
    mt_trace_count_free(t, 1, SIZE, false);
    /* Another thread's allocation, cut by a fork after alloc_count. */
    (void)mt_trace_lock(t);
    mt_tc_add(&t->alloc_count, 1);
    mt_traces_child_repair();
    mt_trace_counts c;
    mt_trace_read(t, &c); /* ends: the lock is free */
    assert_int_equal(atomic_load_explicit(&t->seq, memory_order_relaxed) & 1, 0);
    assert_true(c.alloc_count >= c.free_count);
    assert_int_equal(c.alloc_count, 3);
    assert_true(c.free_count <= 1); /* at most the cut event off */
    uint64_t freed = c.free_count;
    mt_trace_count_free(t, 1, SIZE, false); /* the hooks go on in the child */
    mt_trace_read(t, &c);
    assert_int_equal(c.free_count, freed + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_hold_whole_events),
        cmocka_unit_test(fork_cut_section_is_repaired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
