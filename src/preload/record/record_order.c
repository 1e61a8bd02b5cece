/* record_order.c -- MEMTOP_RECORD_ORDER (record_order.h). */
#define _GNU_SOURCE
#include "record_order.h"

#include "core_log.h"
#include "shm_layout.h"

#include <stdatomic.h>
#include <string.h>

/* Set by the recording control before the session it is for begins, read
 * by that session's start (the control's thread, before the session's
 * writer runs): relaxed. */
static _Atomic bool g_env_thread;  /* MEMTOP_RECORD_ORDER=thread */
static _Atomic bool g_next_thread; /* the next session keeps the threads' order */

void mt_rec_order_env(const char *v)
{
    bool thread = v && strcmp(v, "thread") == 0;
    if (v && !thread && strcmp(v, "tick") != 0)
        mt_log(MT_LOG_WARN,
               "warning: MEMTOP_RECORD_ORDER='%.64s' is not tick or thread; using tick", v);
    atomic_store_explicit(&g_env_thread, thread, memory_order_relaxed);
    atomic_store_explicit(&g_next_thread, thread, memory_order_relaxed);
}

const char *mt_rec_order_cmd(const char *arg)
{
    size_t n = strlen(MT_CTRL_THREAD_ORDER);
    bool thread = strncmp(arg, MT_CTRL_THREAD_ORDER, n) == 0 && arg[n] == ' ';
    bool env = atomic_load_explicit(&g_env_thread, memory_order_relaxed);
    atomic_store_explicit(&g_next_thread, thread || env, memory_order_relaxed);
    return thread ? arg + n + 1 : arg;
}

bool mt_rec_order_ticks(void)
{
    return !atomic_load_explicit(&g_next_thread, memory_order_relaxed);
}
