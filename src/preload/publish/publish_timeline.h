/* publish_timeline.h -- process totals over the whole life of the process. */
#ifndef MT_TIMELINE_H
#define MT_TIMELINE_H

#include "shm_layout.h"

typedef struct mt_timeline {
    mt_shm_point pts[MT_TIMELINE_POINTS];
    uint32_t n;
    uint64_t step_ns; /* minimum spacing between kept points */
} mt_timeline;

void mt_timeline_init(mt_timeline *tl, uint64_t step_ns);
void mt_timeline_add(mt_timeline *tl, const mt_shm_point *p);

#endif
