/* replay_silence.c -- where a recording holds no record at all: the
 * target did not run (see replay_silence.h). */
#include "replay_silence.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (1u << 24) /* 2^27 buckets: 155 days; later times are not marked */

int mt_rsilence_mark(mt_rsilence *s, uint64_t t_ns)
{
    uint64_t b = t_ns / MT_SILENCE_BUCKET_NS;
    if (b / 8 >= MAX_BYTES)
        return 0;
    if (b / 8 >= s->nbytes) {
        size_t n = s->nbytes ? s->nbytes : 256;
        while (n <= b / 8)
            n *= 2;
        uint8_t *p = realloc(s->seen, n);
        if (!p)
            return -1;
        memset(p + s->nbytes, 0, n - s->nbytes);
        s->seen = p;
        s->nbytes = n;
    }
    s->seen[b / 8] |= (uint8_t)(1u << (b % 8));
    return 0;
}

static bool seen(const mt_rsilence *s, uint64_t b)
{
    return b / 8 < s->nbytes && (s->seen[b / 8] >> (b % 8) & 1u);
}

static int add_gap(mt_rsilence *s, uint64_t from, uint64_t to)
{
    struct mt_rsilent *g = realloc(s->gaps, (s->ngaps + 1) * sizeof *g);
    if (!g)
        return -1;
    s->gaps = g;
    g[s->ngaps++] = (struct mt_rsilent){from, to};
    return 0;
}

/* Runs of empty buckets between two marked ones: a silence from the end
 * of the one before to the start of the one after, when at least
 * MT_SILENCE_MIN_NS long (bucket-wide: the record times are not kept). */
int mt_rsilence_finish(mt_rsilence *s, uint64_t lo_ns, uint64_t hi_ns)
{
    uint64_t last = UINT64_MAX, hi = hi_ns / MT_SILENCE_BUCKET_NS;
    for (uint64_t b = lo_ns / MT_SILENCE_BUCKET_NS; b <= hi && b / 8 < s->nbytes; b++) {
        if (!seen(s, b))
            continue;
        uint64_t from = (last + 1) * MT_SILENCE_BUCKET_NS, to = b * MT_SILENCE_BUCKET_NS;
        if (last != UINT64_MAX && to - from >= MT_SILENCE_MIN_NS && add_gap(s, from, to) != 0)
            return -1;
        last = b;
    }
    free(s->seen);
    s->seen = NULL;
    s->nbytes = 0;
    return 0;
}

bool mt_rsilence_at(const mt_rsilence *s, uint64_t t_ns, uint64_t *from_ns, uint64_t *to_ns)
{
    for (size_t i = 0; i < s->ngaps; i++) {
        if (s->gaps[i].from_ns < t_ns && t_ns < s->gaps[i].to_ns) {
            *from_ns = s->gaps[i].from_ns;
            *to_ns = s->gaps[i].to_ns;
            return true;
        }
    }
    return false;
}

uint64_t mt_rsilence_within(const mt_rsilence *s, uint64_t lo_ns, uint64_t hi_ns)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->ngaps; i++) {
        uint64_t a = s->gaps[i].from_ns > lo_ns ? s->gaps[i].from_ns : lo_ns;
        uint64_t b = s->gaps[i].to_ns < hi_ns ? s->gaps[i].to_ns : hi_ns;
        sum += b > a ? b - a : 0;
    }
    return sum;
}

void mt_rsilence_free(mt_rsilence *s)
{
    free(s->seen);
    free(s->gaps);
    memset(s, 0, sizeof *s);
}
