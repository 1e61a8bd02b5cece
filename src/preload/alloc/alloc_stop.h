/* alloc_stop.h -- holding every other thread of the process still for a
 * moment (a stop-the-world), so that code can be rewritten where another
 * thread might otherwise be running it (alloc_patch.c, docs/allocators.md
 * "When"). */
#ifndef MT_ALLOC_STOP_H
#define MT_ALLOC_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Addresses no stopped thread may be at, nor return to: (lo, hi), both
 * excluded (a thread at lo itself is before the first byte rewritten). */
typedef struct mt_stop_range {
    uint64_t lo, hi;
} mt_stop_range;

/* Stops every thread of the process but the caller and memtop's own
 * (registered with mt_world_exempt: they never run an allocator's entry
 * points), each parked in a signal handler, and checks that none of them
 * is inside one of the n ranges: neither its program counter nor a word
 * of the first bytes of its stack (return addresses, a signal frame's
 * saved context).  True: all stopped and clear, until mt_world_resume.
 * False (why says it; everyone already released): a thread did not stop
 * within the timeout (it blocks the signal, or is stopped by a debugger),
 * a thread is inside a range, a stopped thread's stack cannot be read, no
 * real-time signal is free, too many threads.  While stopped the caller must take no lock, allocate nothing
 * and call nothing another thread could hold or need. */
bool mt_world_stop(const mt_stop_range *r, size_t n, char *why, size_t cap);

/* Called by memtop's own threads (publisher, recording writer) with all
 * signals blocked, on (true) when they start and off (false) as the last
 * thing before they end: a stop neither signals nor waits for the threads
 * registered, known by thread id (a program thread may take their names).
 * At most 4 at once; a fork parent's registrations are ignored (and
 * reused) in the child.  Async-signal-safe, lock-free. */
void mt_world_exempt(bool on);

/* Lets the stopped threads go on. */
void mt_world_resume(void);

/* Around an exec call (hook_exec.c): no stop signals the calling thread
 * from begin until a failed exec's end (a signal that reached the thread
 * inside execve would be pending in the new image, which has no handler
 * for it: the default action ends the process).  begin waits for a stop
 * already under way to end, then drops a stop signal still pending on the
 * thread (mt_world_drop_pending); stops meanwhile are refused.  Both are
 * async-signal-safe; a vfork child's count, left raised by its exec, is
 * another pid's and ignored. */
void mt_world_exec_begin(void);
void mt_world_exec_end(void);

/* Takes a stop signal still pending on the calling thread (it blocked the
 * signal when a stop tried to reach it) off it, before exec: the new
 * image keeps pending signals but not the handler, and the default action
 * of a real-time signal ends the process.  Async-signal-safe. */
void mt_world_drop_pending(void);

#endif
