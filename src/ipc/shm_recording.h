/* shm_recording.h -- the viewer's copy of the target's recording status
 * (header.recording, see shm_layout.h), validated. */
#ifndef MEMTOP_SHM_RECORDING_H
#define MEMTOP_SHM_RECORDING_H

#include "shm_segment.h"

/* Copy the status out of the header: state read with acquire first, then
 * the fields; strings NUL-terminated within their fields.  MT_E_CORRUPT
 * for an unknown state or an unterminated string (a segment written by
 * something else than libmemtop.so). */
mt_errc mt_segment_recording(const mt_segment *seg, mt_shm_recording *out, mt_err *err);

/* The recording's dropped events by cause (header.rec_dropped_why,
 * dat_format.h MT_DAT_LOST_*): all 0 in an older target's segment, or on
 * an error (a fault reading the mapping). */
mt_errc mt_segment_recording_why(const mt_segment *seg, uint64_t why[MT_REC_WHY_MAX], mt_err *err);

/* "5 events dropped: disk behind 3, writer starved (1 s wait) 2" (r's
 * events_dropped, named by the causes in why, MT_REC_WHY_MAX counts or
 * NULL: not known), or "" when none was dropped.  Returns buf. */
char *mt_recording_dropped(const mt_shm_recording *r, const uint64_t *why, char *buf, size_t n);

/* A short line for the viewer's header, e.g. "REC /tmp/x.dat 12.3 MB" or
 * "recording failed: write error: No space left on device (ENOSPC)";
 * dropped events with their causes when why (MT_REC_WHY_MAX counts) is
 * not NULL: "(recording inexact: 5 events dropped: disk behind 5)". */
void mt_recording_line(const mt_shm_recording *r, const uint64_t *why, char *out, unsigned cap);

#endif
