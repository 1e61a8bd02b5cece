/* record_order.c -- MEMTOP_RECORD_ORDER (record_order.h). */
#define _GNU_SOURCE
#include "record_order.h"

#include "core_log.h"

#include <stdatomic.h>
#include <string.h>

/* Set by the recording control before any session begins, read by the
 * session that begins (both under the writer's lock or before the writer
 * thread exists): relaxed. */
static _Atomic bool g_thread_order;

void mt_rec_order_env(const char *v)
{
    bool thread = v && strcmp(v, "thread") == 0;
    if (v && !thread && strcmp(v, "tick") != 0)
        mt_log(MT_LOG_WARN, "memtop: MEMTOP_RECORD_ORDER=%s: not 'tick' or 'thread'; tick", v);
    atomic_store_explicit(&g_thread_order, thread, memory_order_relaxed);
}

bool mt_rec_order_ticks(void)
{
    return !atomic_load_explicit(&g_thread_order, memory_order_relaxed);
}
