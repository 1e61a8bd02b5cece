/* record_writer_parts.h -- what the three parts of the recording writer
 * (record_zstd.c: file output, record_thread.c: the writer thread,
 * record_session.c: the session's life cycle) call in each other; not for
 * the rest of the preload, which uses record_writer.h.  All with mt_w.lock
 * held unless said otherwise. */
#ifndef MT_RECORD_WRITER_PARTS_H
#define MT_RECORD_WRITER_PARTS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define MT_RECW_TOTALS_DUE UINT64_MAX /* last_totals_ns: the first TOTALS is still due */

static inline void mt_recw_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* record_zstd.c */
/* Ends the session on a write error (errno err, EIO if 0): recording off,
 * the error kept for the status and logged once. */
void mt_recw_fail(int err);
/* Gives back the space reserved past the end of the file. */
void mt_recw_release_reserve(void);
/* Buffers and the zstd context (mmap-backed), reset for a new session;
 * false if there is no memory. */
bool mt_recw_setup_memory(void);
/* Gives the writer's memory back (mt_recw_setup_memory's, the frame
 * context's, the tick order's, the cull's, the state sets', the rings'
 * events left over and spare chunks): lock held, no session open.  The
 * next session maps it again. */
void mt_recw_free_memory(void);
void mt_recw_write_file_header(void);
/* After a write error: END(ERROR) at the end of the last complete frame. */
void mt_recw_error_end(void);

/* record_session.c */
/* Closes the session's file and gives the writer's memory back
 * (mt_recw_free_memory): every path that ends a session.  Lock held. */
void mt_recw_close(void);

/* record_thread.c */
/* Whether this process owns an open, healthy, unsealed file. */
bool mt_recw_owned(void);
/* Wakes the writer thread; waits (bounded) for it to exit once told to
 * stop.  Without the lock. */
void mt_recw_wake_writer(void);
void mt_recw_wait_writer_exit(void);

#endif
