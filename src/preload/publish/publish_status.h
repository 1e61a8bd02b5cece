/* publish_status.h -- why this process has no segment, kept where a viewer
 * can read it without one (src/ipc/preload_status.h). */
#ifndef MT_PUBLISH_STATUS_H
#define MT_PUBLISH_STATUS_H

#include "preload_status.h"

/* Records that creating the segment failed at phase with errno err, on
 * path (may be NULL).  Under the publish lock, or before the publisher
 * thread runs. */
void mt_status_fail(mt_status_phase phase, int err, const char *path);

/* Forgets a failure: a fork child's record says nothing yet (its parent's
 * failure is not its own), nor does a new attempt. */
void mt_status_clear(void);

#endif
