/* dat_reader_tagpairs.c -- version 8's TAG_PAIRS table and the expansion
 * of an EVENTS2 record's codes into its tags (see dat_reader_tagpairs.h;
 * the format: dat_format.h, "Version 8"). */
#include "dat_reader_tagpairs.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "dat_reader_impl.h"

#define BAD_PAIRS "bad tag pairs"
#define BAD_CODE "tag code beyond its table"
#define BAD_LEN MT_DTP_BAD_LEN

_Static_assert(MT_DAT_TAG_ESCAPE == 255 && MT_DAT_TAG_PAIRS_MAX == 255,
               "codes 0 to 254 are pairs, 255 the escape: one row of 256 a context");

/* A new table: every code of every context beyond it, 255 the escape. */
static mt_dtp_table *new_table(void)
{
    mt_dtp_table *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    for (unsigned c = 0; c < MT_DAT_TAG_CONTEXTS; c++) {
        for (unsigned x = 0; x < MT_DAT_TAG_ESCAPE; x++)
            t->code[c][x] = MT_DTP_NONE;
        t->code[c][MT_DAT_TAG_ESCAPE] = MT_DTP_ESC;
    }
    memset(t->npairs, 0, sizeof t->npairs);
    t->tags[0] = 0;
    return t;
}

/* The table read last emptied: only its own pairs are set. */
static void clear(mt_dtp_table *t)
{
    for (unsigned c = 0; c < MT_DAT_TAG_CONTEXTS; c++) {
        for (unsigned x = 0; x < t->npairs[c]; x++)
            t->code[c][x] = MT_DTP_NONE;
        t->npairs[c] = 0;
    }
}

/* One context's list into t: false if a field is out of range or cut. */
static bool read_context(mt_dtp_table *t, mt_dcur *c, uint64_t *prev, bool first)
{
    uint64_t ctx, n, pair;
    if (!mt_dcur_v(c, &ctx) || ctx >= MT_DAT_TAG_CONTEXTS || (!first && ctx <= *prev))
        return false;
    if (!mt_dcur_v(c, &n) || n == 0 || n > MT_DAT_TAG_PAIRS_MAX)
        return false;
    *prev = ctx;
    for (uint64_t k = 0; k < n; k++) {
        if (!mt_dcur_v(c, &pair) || pair > 0xffffu)
            return false;
        t->code[ctx][k] = (uint32_t)pair;
        t->npairs[ctx] = (uint8_t)(k + 1); /* what clear() empties */
    }
    return true;
}

mt_errc mt_dtp_read(mt_dtp *p, const unsigned char *at, const unsigned char *end, const char **why)
{
    if (!p->t && !(p->t = new_table()))
        return MT_E_NOMEM;
    mt_dtp_table *t = p->t;
    clear(t);
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
    clear(t); /* a bad table has no pairs */
    *why = BAD_PAIRS;
    return MT_E_CORRUPT;
}

/* The pair whose code is at **at (with an escape's two tags, which the
 * caller knows are there) into out[0, 2); *c8 (the context << 8) becomes
 * its second tag's.  False if the code is beyond the table. */
static inline __attribute__((always_inline)) bool
one_pair(const mt_dtp_table *t, unsigned *c8, const unsigned char **at, unsigned char *out)
{
    const unsigned char *a = *at;
    uint32_t v = (&t->code[0][0])[*c8 | *a++];
    if (v > 0xffffu) { /* rare: an escape, or no pair */
        if (v != MT_DTP_ESC)
            return false;
        v = (uint32_t)a[0] | (uint32_t)a[1] << 8;
        a += 2;
    }
    out[0] = (unsigned char)v;
    out[1] = (unsigned char)(v >> 8);
    *c8 = v & 0xff00u;
    *at = a;
    return true;
}

const char *mt_dtp_expand(const mt_dtp *p, const unsigned char *at, const unsigned char *end,
                          size_t n)
{
    const mt_dtp_table *t = p->t;
    assert(p->on && n <= MT_DAT_EVENTS_MAX); /* start_items checked nevents */
    unsigned char *out = p->t->tags + 1;
    unsigned c8 = 0; /* the context (the tag before) << 8: 0 at the start */
    size_t pairs = n / 2;
    /* k pairs take at most 3 k bytes: while that many are left, no test
     * of the column's end (most of a record's pairs) */
    for (size_t k; pairs && (k = (size_t)(end - at) / 3) > 0;) {
        k = k < pairs ? k : pairs;
        pairs -= k;
        for (; k; k--, out += 2)
            if (!one_pair(t, &c8, &at, out))
                return BAD_CODE;
    }
    for (; pairs; pairs--, out += 2) { /* the last 2 bytes or less of the column */
        if (at >= end || (*at == MT_DAT_TAG_ESCAPE && end - at < 3))
            return BAD_LEN;
        if (!one_pair(t, &c8, &at, out))
            return BAD_CODE;
    }
    if (n & 1) { /* the last, odd tag as it is */
        if (at >= end)
            return BAD_LEN;
        *out = *at++;
    }
    return at == end ? NULL : BAD_LEN;
}
