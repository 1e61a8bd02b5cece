/* publish_thread.h -- the background thread that publishes snapshots. */
#ifndef MT_PUBLISHER_H
#define MT_PUBLISHER_H

#include <stdbool.h>

/* Tracking has started in this process (fork_child: in a fork child):
 * starts the publisher thread, which creates the segment MEMTOP_START_MS
 * later, or creates it now (publish_thread.c, "Short processes").  False
 * if something that should have started could not. */
bool mt_publisher_arm(bool fork_child);
/* Final snapshot at exit: end the thread, publish, mark exited, unlink
 * unless kept. */
void mt_publisher_final(void);
/* exec (hook_exec.c, which calls prepare for the first of the threads
 * exec'ing at once and undo for the last of them whose exec failed, under
 * its exec lock).  mine: this process's publisher (not a vfork child's
 * parent's, nor a parent's whose fork child skipped the atfork reset).
 * prepare: hold a thread still in its first wait, or end it, publish,
 * mark exited and exec'd, keep the segment (the new image replaces it if
 * it loads libmemtop.so); false if there was nothing to do (no thread and
 * no segment, or not this process's).  undo: let the held thread go, or
 * take the marks back and restart the thread (not after an exit began). */
bool mt_publisher_exec_mine(void);
bool mt_publisher_exec_prepare(void);
void mt_publisher_exec_undo(void);

/* Records the loaded modules now (before a dlclose, so that addresses in
 * a module loaded and unloaded between two publishes stay resolvable). */
void mt_publisher_sync_modules(void);

/* fork support. */
void mt_publisher_lock(void);
void mt_publisher_unlock(void);
void mt_publisher_child_reset(void);

#endif
