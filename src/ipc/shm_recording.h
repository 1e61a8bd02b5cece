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

/* A short line for the viewer's header, e.g. "REC /tmp/x.dat 12.3 MB" or
 * "recording failed: write error: No space left on device (ENOSPC)". */
void mt_recording_line(const mt_shm_recording *r, char *out, unsigned cap);

#endif
