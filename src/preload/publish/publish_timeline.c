/* publish_timeline.c -- a bounded history of process totals covering all of it.
 *
 * Points are kept at least step_ns apart.  When the buffer is full, every
 * other point is dropped and the step doubles, so after any uptime the
 * buffer spans the whole life of the process at uniform resolution: a
 * viewer attaching after days still sees the whole curve.  The newest point
 * is always the latest sample (it replaces the previous newest point until
 * a full step has passed).
 */
#include "publish_timeline.h"

#include <string.h>

void mt_timeline_init(mt_timeline *tl, uint64_t step_ns)
{
    memset(tl, 0, sizeof *tl);
    tl->step_ns = step_ns ? step_ns : 1000000000ull;
}

static void halve(mt_timeline *tl)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < tl->n; i += 2)
        tl->pts[k++] = tl->pts[i];
    tl->n = k;
    tl->step_ns *= 2;
}

void mt_timeline_add(mt_timeline *tl, const mt_shm_point *p)
{
    if (tl->n >= 2 && p->t_ns - tl->pts[tl->n - 2].t_ns < tl->step_ns) {
        tl->pts[tl->n - 1] = *p; /* still inside the newest step: refresh it */
        return;
    }
    if (tl->n == MT_TIMELINE_POINTS)
        halve(tl);
    tl->pts[tl->n++] = *p;
}
