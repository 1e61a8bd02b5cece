/* replay_ckpt.c -- taking, thinning and restoring checkpoints (see
 * replay_ckpt.h). */
#include "replay_ckpt.h"

#include <stdlib.h>
#include <string.h>

void mt_rckpts_init(mt_rckpts *c, uint64_t spacing_ns)
{
    memset(c, 0, sizeof *c);
    c->spacing_ns = spacing_ns ? spacing_ns : 1;
}

static void drop(mt_rckpt *k)
{
    free(k->traces);
    free(k->groups);
    memset(k, 0, sizeof *k);
}

void mt_rckpts_free(mt_rckpts *c)
{
    for (size_t i = 0; i < c->n; i++)
        drop(&c->items[i]);
    c->n = 0;
    c->bytes = 0;
}

/* Keep items 0, 2, 4, ...; double the spacing. */
static void thin(mt_rckpts *c)
{
    size_t w = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (i % 2 == 0) {
            c->items[w++] = c->items[i];
        } else {
            c->bytes -= c->items[i].bytes;
            drop(&c->items[i]);
        }
    }
    c->n = w;
    c->spacing_ns *= 2;
}

static int take(mt_rckpt *k, const mt_rstate *st, const mt_dat_pos *pos)
{
    memset(k, 0, sizeof *k);
    k->pos = *pos;
    k->s = st->s;
    size_t tb = st->s.ndefs * sizeof(mt_rtrace);
    if (tb) {
        k->traces = malloc(tb);
        if (k->traces)
            memcpy(k->traces, st->traces, tb);
    }
    k->ngroups = st->live.count;
    k->groups = mt_rlive_export(&st->live);
    k->bytes = tb + k->ngroups * sizeof(mt_rgroup);
    if ((tb && !k->traces) || (k->ngroups && !k->groups)) {
        drop(k);
        return -1;
    }
    return 0;
}

int mt_rckpts_maybe_add(mt_rckpts *c, const mt_rstate *st, const mt_dat_pos *pos)
{
    if (c->n && st->s.t_ns - c->items[c->n - 1].s.t_ns < c->spacing_ns)
        return 0;
    size_t need = mt_rstate_bytes(st);
    if (c->n && need > MT_RCKPT_BUDGET / 4)
        return 0; /* the state alone is too big to copy often: seek from older ones */
    while (c->n > 1 && (c->n == MT_RCKPT_MAX || c->bytes + need > MT_RCKPT_BUDGET))
        thin(c);
    if (c->n == MT_RCKPT_MAX || c->bytes + need > MT_RCKPT_BUDGET)
        return 0;
    if (take(&c->items[c->n], st, pos) != 0)
        return -1;
    c->bytes += c->items[c->n].bytes;
    c->n++;
    return 0;
}

const mt_rckpt *mt_rckpts_find(const mt_rckpts *c, uint64_t t_ns)
{
    if (!c->n)
        return NULL;
    const mt_rckpt *best = &c->items[0];
    for (size_t i = 1; i < c->n && c->items[i].s.t_ns <= t_ns; i++)
        best = &c->items[i];
    return best;
}

const mt_rckpt *mt_rckpts_before(const mt_rckpts *c, uint64_t t_ns, uint64_t min_age_ns)
{
    if (t_ns < min_age_ns)
        return NULL;
    const mt_rckpt *k = mt_rckpts_find(c, t_ns - min_age_ns);
    return k && k->s.events && k->s.t_ns <= t_ns - min_age_ns ? k : NULL;
}

int mt_rckpt_restore(const mt_rckpt *k, mt_rstate *st)
{
    if (k->s.ndefs > st->traces_cap) {
        mt_rtrace *t = realloc(st->traces, k->s.ndefs * sizeof *t);
        if (!t)
            return -1;
        st->traces = t;
        st->traces_cap = k->s.ndefs;
    }
    if (mt_rlive_import(&st->live, k->groups, k->ngroups) != 0)
        return -1;
    if (k->s.ndefs)
        memcpy(st->traces, k->traces, k->s.ndefs * sizeof *st->traces);
    st->s = k->s;
    return 0;
}
