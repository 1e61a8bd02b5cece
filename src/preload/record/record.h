/* record.h -- what the hooks and the lifecycle need from recordings.
 *
 * mt_rec_mode is the one word the hot path reads: 0 when no recording runs
 * (then the hooks take one predictable branch and do nothing else), else
 * MT_RECMODE_ON or MT_RECMODE_PAUSE (a mid-run start is capturing the
 * initial state: recording hooks wait at their gate, holding no lock).
 */
#ifndef MT_RECORD_H
#define MT_RECORD_H

#include "core_common.h"
#include "table_ptr.h"
#include "shm_layout.h"

#include <stdbool.h>
#include <stddef.h>

enum { MT_RECMODE_OFF = 0, MT_RECMODE_ON = 1, MT_RECMODE_PAUSE = 2 };

extern _Atomic int mt_rec_mode;

static inline bool mt_rec_on(void)
{
    return atomic_load_explicit(&mt_rec_mode, memory_order_relaxed) != MT_RECMODE_OFF;
}

static inline bool mt_rec_paused(void)
{
    return atomic_load_explicit(&mt_rec_mode, memory_order_acquire) == MT_RECMODE_PAUSE;
}

/* Waits while a mid-run start captures the initial state: one load when
 * no start is pausing (inline: a hook passes the gate two or three times
 * per call while recording), the wait itself out of line. */
void mt_rec_gate_wait(void);

static inline void mt_rec_gate(void)
{
    if (MT_UNLIKELY(mt_rec_paused()))
        mt_rec_gate_wait();
}

/* Events, called right after the tracker accounted them (no lock held).
 * p: the block's address.  flags: MT_DAT_EVF_*.  may_wait: false in a
 * signal handler. */
void mt_rec_alloc(uint64_t t_ns, const void *p, uint32_t trace, uint64_t size);
void mt_rec_free(uint64_t t_ns, const void *p, const mt_block *b, unsigned flags, bool may_wait);

/* Lifecycle (record_control.c). */
void mt_rec_init(char **envp);       /* MEMTOP_RECORD at tracking start */
void mt_rec_ctor(char **envp);       /* our constructor: start the writer thread */
void mt_rec_child_reset(void);       /* atfork child: the parent's recording is not ours */
void mt_rec_child_start(void);       /* first hook of a fork child */
void mt_rec_finish(unsigned reason); /* exit, _exit, exec: finalize (MT_DAT_END_*) */

/* exec (hook_exec.c, which calls prepare for the first of the threads
 * exec'ing at once and undo for the last of them whose exec failed, under
 * its exec lock).  mine: a recording of this process is on (not a vfork
 * child's parent's).  prepare: the final state and END are written but
 * the file stays open (true if so).  undo (the exec returned: it failed,
 * err its errno): the recording resumes as if nothing happened, or, if the
 * file cannot be cut back, ends with status FAILED "exec failed (ERRNO):
 * ...". */
bool mt_rec_exec_mine(void);
bool mt_rec_exec_prepare(void);
void mt_rec_exec_undo(int err);

/* dlclose, before and after the real one (hook_dl.c): the recording's
 * module map brought up to date, so that the library about to go has its
 * MODULE record, and, after, its UNLOAD with the next trace id
 * (record_thread.c). */
void mt_rec_dlclose_modules(bool after); /* after: the listing after the real one */

/* Control channel (publisher thread).  Fill msg; return MT_CTRL_*.
 * beat: the header's rec_lease_beat for MT_CMD_RECORD_START_LEASED (the
 * recording is held by the viewer that asked), NULL for RECORD_START. */
int mt_rec_cmd_start(const char *arg, const uint64_t *beat, char *msg, size_t cap);
/* arg: "" stops whatever runs; MT_CTRL_STOP_RECORDING N only the Nth. */
int mt_rec_cmd_stop(const char *arg, char *msg, size_t cap);

/* Ends a leased recording whose beat (the header's rec_lease_beat) has
 * not changed for its bound, with END(lease) (publisher thread, at each
 * poll; nothing to do for a recording without a lease). */
void mt_rec_lease_check(const uint64_t *beat);

/* Copies the recording status into the segment header (publisher). */
void mt_rec_publish_status(mt_shm_header *h);

/* The writer's error when the file was truncated under it (record_zstd.c
 * file_cut): nothing more is written to it, not even END (it would go at
 * the old offset, past a hole); the status says so, not "write error". */
#define MT_RECW_ERR_CUT ESTALE

#endif
