/* replay_timeline.h -- the process timeline of a recording: one point per
 * periodic totals event, thinned (every other point dropped, spacing
 * doubled) when full, so it covers the whole run in bounded memory. */
#ifndef MEMTOP_REPLAY_TIMELINE_H
#define MEMTOP_REPLAY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "shm_layout.h"

#define MT_RTL_MAX 4096u

typedef struct mt_rtimeline {
    mt_shm_point pts[MT_RTL_MAX];
    size_t n;
    uint64_t step_ns; /* minimum spacing of kept points */
} mt_rtimeline;

void mt_rtl_init(mt_rtimeline *tl);

/* Add p (times must not go back; an earlier one is dropped). */
void mt_rtl_add(mt_rtimeline *tl, const mt_shm_point *p);

/* The points at or before t_ns, then `last` (the cursor's own point),
 * evenly downsampled to at most max points (>= 2) into out.  Returns the
 * count; *step_ns gets their typical spacing. */
size_t mt_rtl_until(const mt_rtimeline *tl, uint64_t t_ns, const mt_shm_point *last,
                    mt_shm_point *out, size_t max, uint64_t *step_ns);

#endif
