/* dat_reader_tagpairs.c -- version 8's TAG_PAIRS table and the expansion
 * of an EVENTS2 record's codes into its tags (see dat_reader_tagpairs.h;
 * the format: dat_format.h, "Version 8"). */
#include "dat_reader_tagpairs.h"

#include <stdlib.h>
#include <string.h>

#include "dat_reader_impl.h"

#define BAD_PAIRS "bad tag pairs"
#define BAD_CODE "tag code beyond its table"
#define BAD_LEN "tags column length"

/* One context's list into t: false if a field is out of range or cut. */
static bool read_context(mt_dtp_table *t, mt_dcur *c, uint64_t *prev, bool first)
{
    uint64_t ctx, n, pair;
    if (!mt_dcur_v(c, &ctx) || ctx >= MT_DAT_TAG_CONTEXTS || (!first && ctx <= *prev))
        return false;
    if (!mt_dcur_v(c, &n) || n == 0 || n > MT_DAT_TAG_PAIRS_MAX)
        return false;
    for (uint64_t k = 0; k < n; k++) {
        if (!mt_dcur_v(c, &pair) || pair > 0xffffu)
            return false;
        t->pairs[ctx][k] = (uint16_t)pair;
    }
    t->npairs[ctx] = (uint8_t)n;
    *prev = ctx;
    return true;
}

mt_errc mt_dtp_read(mt_dtp *p, const unsigned char *at, const unsigned char *end, const char **why)
{
    if (!p->t && !(p->t = malloc(sizeof *p->t)))
        return MT_E_NOMEM;
    mt_dtp_table *t = p->t;
    t->tags[0] = 0;
    memset(t->npairs, 0, sizeof t->npairs);
    p->on = true;
    mt_dcur c = {at, end};
    uint64_t n, prev = 0;
    /* no test of n against MT_DAT_TAG_CONTEXTS: contexts strictly
     * ascending up to 255 are at most that many */
    bool ok = mt_dcur_v(&c, &n);
    for (uint64_t i = 0; ok && i < n; i++)
        ok = read_context(t, &c, &prev, i == 0);
    if (ok)
        return MT_OK;
    memset(t->npairs, 0, sizeof t->npairs); /* a bad table has no pairs */
    *why = BAD_PAIRS;
    return MT_E_CORRUPT;
}

const char *mt_dtp_expand(const mt_dtp *p, const unsigned char *at, const unsigned char *end,
                          size_t n)
{
    const mt_dtp_table *t = p->t;
    unsigned char *out = p->t->tags + 1, *last = out + (n & ~(size_t)1);
    unsigned c = 0; /* the context: the tag before */
    while (out < last) {
        if (at >= end)
            return BAD_LEN;
        unsigned x = *at++;
        if (x == MT_DAT_TAG_ESCAPE) {
            if (end - at < 2)
                return BAD_LEN;
            out[0] = at[0];
            out[1] = at[1];
            at += 2;
        } else {
            if (x >= t->npairs[c])
                return BAD_CODE;
            unsigned v = t->pairs[c][x];
            out[0] = (unsigned char)v;
            out[1] = (unsigned char)(v >> 8);
        }
        c = out[1];
        out += 2;
    }
    if (n & 1) { /* the last, odd tag as it is */
        if (at >= end)
            return BAD_LEN;
        *out = *at++;
    }
    return at == end ? NULL : BAD_LEN;
}
