/* core_start.c -- starts memtop's threads, the publisher and then the
 * recording's writer, exactly once per process.
 *
 * Tracking starts at the first hook (the initialiser, core_lifecycle.c
 * mt_ensure_ready), often before our constructor, and threads can only be
 * created once the constructor ran.  So whichever of the two finishes
 * second starts the threads: each stores its "done" (mt_g.state READY,
 * g_ctor_done) and then loads the other's, seq_cst, so at least one of
 * them sees the other.  Both may: an exchange on g_started lets only the
 * first through (two publishers would each create a segment, leaking one
 * mapping and its descriptor, and race on the publisher's state).  The
 * one that gets through also reloads the settings and starts the
 * recording, so that neither depends on which of the two it was.  A fork
 * child has neither thread: the flag is reset in it (atfork) and its
 * first hook starts them again.
 */
#include "core_start.h"

#include "core_sample.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "publish_thread.h"
#include "record.h"

#include <stdatomic.h>

static _Atomic bool g_started;

/* True for the first caller in this process (acq_rel: a later caller sees
 * what the first did before it, nothing relies on more). */
static bool claim(void)
{
    return !atomic_exchange_explicit(&g_started, true, memory_order_acq_rel);
}

void mt_start_threads(char **envp, bool reload_config)
{
    if (!claim())
        return;
    int was = mt_in_hook_set(MT_IN_OWN);
    if (reload_config)
        mt_config_load(&mt_g.cfg, envp);
    if (reload_config && mt_g.cfg.disabled) {
        mt_sample_disarm(); /* others stay armed: they only count (core_sample.h) */
        atomic_store_explicit(&mt_g.state, MT_ST_OFF, memory_order_release);
    } else {
        mt_publisher_arm(false);
        mt_rec_ctor(envp); /* MEMTOP_RECORD: its writer thread */
    }
    mt_in_hook_restore(was);
}

void mt_start_child_threads(void)
{
    if (!claim())
        return;
    int was = mt_in_hook_set(MT_IN_OWN);
    mt_publisher_arm(true);
    mt_rec_child_start();
    mt_in_hook_restore(was);
}

void mt_start_child_reset(void)
{
    atomic_store_explicit(&g_started, false, memory_order_relaxed); /* one thread now */
}
