/* replay_timeline.c -- the bounded timeline of a recording (see
 * replay_timeline.h). */
#include "replay_timeline.h"

#include <string.h>

void mt_rtl_init(mt_rtimeline *tl)
{
    tl->n = 0;
    tl->step_ns = 0;
}

static void thin(mt_rtimeline *tl)
{
    size_t w = 0;
    for (size_t i = 0; i < tl->n; i += 2)
        tl->pts[w++] = tl->pts[i];
    tl->n = w;
    uint64_t span = tl->n > 1 ? tl->pts[tl->n - 1].t_ns - tl->pts[0].t_ns : 0;
    uint64_t step = tl->n > 1 ? span / (tl->n - 1) : 0;
    tl->step_ns = step > tl->step_ns * 2 ? step : tl->step_ns * 2;
    if (!tl->step_ns)
        tl->step_ns = 1;
}

void mt_rtl_add(mt_rtimeline *tl, const mt_shm_point *p)
{
    if (tl->n) {
        const mt_shm_point *last = &tl->pts[tl->n - 1];
        if (p->t_ns < last->t_ns || p->t_ns - last->t_ns < tl->step_ns)
            return;
    }
    if (tl->n == MT_RTL_MAX)
        thin(tl);
    tl->pts[tl->n++] = *p;
}

size_t mt_rtl_until(const mt_rtimeline *tl, uint64_t t_ns, const mt_shm_point *last,
                    mt_shm_point *out, size_t max, uint64_t *step_ns)
{
    size_t k = 0;
    while (k < tl->n && tl->pts[k].t_ns <= t_ns && tl->pts[k].t_ns < last->t_ns)
        k++;
    size_t room = max - 1, n = 0;
    size_t stride = k > room ? (k + room - 1) / room : 1;
    for (size_t i = (k - 1) % stride; k && i < k; i += stride)
        out[n++] = tl->pts[i];
    out[n++] = *last;
    *step_ns = n > 1 ? (out[n - 1].t_ns - out[0].t_ns) / (n - 1) : 0;
    return n;
}
