/* caller_labels.c -- the callers that tell apart rows of one location (see
 * caller_labels.h). */
#include "caller_labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned mt_trace_callers(const mt_locator *loc, const uint64_t *frames, unsigned n,
                          char (*out)[MT_CALLER_MAX], unsigned max)
{
    mt_frame site, chain[MT_MAX_CHAIN];
    unsigned at, inner, k = 0;
    if (!n || !mt_trace_site(loc, frames, n, &site, &at, &inner))
        return 0;
    for (unsigned i = at; i < n && k < max; i++) {
        unsigned c = mt_locate_all(loc, frames[i], chain, MT_MAX_CHAIN);
        for (unsigned j = i == at ? inner + 1 : 0; j < c && k < max; j++)
            if (!mt_frame_is_plumbing(loc, frames[i], &chain[j]))
                mt_frame_short(&chain[j], out[k++], MT_CALLER_MAX);
    }
    return k;
}

static unsigned locator_callers(void *ctx, const mt_caller_row *r, char (*out)[MT_CALLER_MAX],
                                unsigned max)
{
    mt_locator at = mt_locator_at(ctx, r->id);
    return mt_trace_callers(&at, r->frames, r->n, out, max);
}

/* Rows of one label, with their callers. */
typedef struct member {
    mt_caller_row *row;
    unsigned k;                           /* callers known */
    const char *callers[MT_CALLER_DEPTH]; /* in text, one block per member */
    char *text;
} member;

/* The first depth (0-based) at which a's and b's callers differ, one of
 * them ending there included; MT_CALLER_DEPTH when none does. */
static unsigned first_difference(const member *a, const member *b)
{
    for (unsigned e = 0; e < MT_CALLER_DEPTH; e++) {
        if (e >= a->k || e >= b->k)
            return a->k == b->k ? MT_CALLER_DEPTH : e;
        if (strcmp(a->callers[e], b->callers[e]) != 0)
            return e;
    }
    return MT_CALLER_DEPTH;
}

/* Paths in order, a path before its longer continuations. */
static int by_path(const void *pa, const void *pb)
{
    const member *a = pa, *b = pb;
    unsigned e = first_difference(a, b);
    if (e == MT_CALLER_DEPTH)
        return 0;
    if (e >= a->k || e >= b->k)
        return a->k < b->k ? -1 : 1;
    return strcmp(a->callers[e], b->callers[e]);
}

/* Depth of every member of one label: one past the deepest first
 * difference from another member, when the member has that many callers.
 * In path order the deepest one is with a neighbour: O(m log m), not the
 * O(m^2) of comparing every pair (a stripped library's one offset can be
 * thousands of rows). */
static void tell_apart(member *m, size_t count)
{
    qsort(m, count, sizeof *m, by_path);
    for (size_t a = 0; a < count; a++) {
        unsigned need = 0, e;
        if (a > 0 && (e = first_difference(&m[a - 1], &m[a])) > need)
            need = e;
        if (a + 1 < count && (e = first_difference(&m[a], &m[a + 1])) > need)
            need = e;
        m[a].row->depth = need < m[a].k ? need + 1 : 0;
    }
}

/* m's callers from fn, kept in one block of their size (a group can be
 * thousands of rows: not MT_CALLER_DEPTH * MT_CALLER_MAX bytes each). */
static bool fill(member *m, mt_callers_fn fn, void *ctx, char (*scratch)[MT_CALLER_MAX])
{
    size_t len[MT_CALLER_DEPTH], total = 1;
    m->k = fn(ctx, m->row, scratch, MT_CALLER_DEPTH);
    for (unsigned i = 0; i < m->k; i++)
        total += (len[i] = strlen(scratch[i])) + 1;
    char *p = m->text = malloc(total);
    if (!p)
        return false;
    for (unsigned i = 0; i < m->k; i++) {
        memcpy(p, scratch[i], len[i] + 1);
        m->callers[i] = p;
        p += len[i] + 1;
    }
    return true;
}

/* The callers of the rows of one label, then their depths. */
static int group(mt_callers_fn fn, void *ctx, mt_caller_row **rows, size_t count)
{
    char scratch[MT_CALLER_DEPTH][MT_CALLER_MAX];
    member *m = calloc(count, sizeof *m);
    bool ok = m != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        m[i].row = rows[i];
        ok = fill(&m[i], fn, ctx, scratch);
    }
    if (ok)
        tell_apart(m, count);
    for (size_t i = 0; m && i < count; i++)
        free(m[i].text);
    free(m);
    return ok ? 0 : -1;
}

static int by_label(const void *a, const void *b)
{
    return strcmp((*(mt_caller_row *const *)a)->label, (*(mt_caller_row *const *)b)->label);
}

int mt_caller_labels_by(mt_callers_fn fn, void *ctx, mt_caller_row *rows, size_t n)
{
    size_t m = 0;
    mt_caller_row **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return -1;
    for (size_t i = 0; i < n; i++) {
        rows[i].depth = 0;
        if (rows[i].n && rows[i].label)
            sorted[m++] = &rows[i];
    }
    qsort(sorted, m, sizeof *sorted, by_label);
    int rc = 0;
    for (size_t i = 0, j; i < m && rc == 0; i = j) {
        for (j = i + 1; j < m && strcmp(sorted[i]->label, sorted[j]->label) == 0; j++)
            ;
        if (j - i > 1)
            rc = group(fn, ctx, sorted + i, j - i);
    }
    free(sorted);
    return rc;
}

int mt_caller_labels(const mt_locator *loc, mt_caller_row *rows, size_t n)
{
    return mt_caller_labels_by(locator_callers, (void *)loc, rows, n);
}

const char *mt_caller_arrow(bool utf8)
{
    return utf8 ? " \u2190 " : " <- ";
}

/* The text names the direct caller and the one that tells the row apart,
 * eliding those between: a recursion makes paths that differ ten frames out
 * ("f <- walk (t.c:9) <- ... <- main (t.c:40)").  Two rows could then read
 * alike (same direct caller and same frame at the same depth, differing in
 * between): rare, and their JSON location_callers say the whole run.
 * teller_only: the direct caller elided too when it is not the teller. */
static char *join(mt_callers_fn fn, void *ctx, const mt_caller_row *r, bool utf8, bool teller_only,
                  char *buf, size_t size)
{
    char callers[MT_CALLER_DEPTH][MT_CALLER_MAX];
    const char *arrow = mt_caller_arrow(utf8), *ellipsis = utf8 ? "\u2026" : "...";
    unsigned k = r->depth ? fn(ctx, r, callers, r->depth) : 0;
    if (k == 0)
        snprintf(buf, size, "%s", r->label);
    else if (k == 1)
        snprintf(buf, size, "%s%s%s", r->label, arrow, callers[0]);
    else if (teller_only)
        snprintf(buf, size, "%s%s%s%s%s", r->label, arrow, ellipsis, arrow, callers[k - 1]);
    else
        snprintf(buf, size, "%s%s%s%s%s%s%s", r->label, arrow, callers[0], arrow,
                 k > 2 ? ellipsis : "", k > 2 ? arrow : "", callers[k - 1]);
    return buf;
}

char *mt_caller_label_join_by(mt_callers_fn fn, void *ctx, const mt_caller_row *r, bool utf8,
                              char *buf, size_t size)
{
    return join(fn, ctx, r, utf8, false, buf, size);
}

char *mt_caller_label_teller_by(mt_callers_fn fn, void *ctx, const mt_caller_row *r, bool utf8,
                                char *buf, size_t size)
{
    return mt_caller_label_compact(join(fn, ctx, r, utf8, true, buf, size));
}

/* The length of a " (where)" at p: a space, '(', no space nor '(' up to
 * its ')', then the end or a space; 0 when p holds none. */
static size_t where_len(const char *p)
{
    if (p[0] != ' ' || p[1] != '(')
        return 0;
    size_t n = 2;
    while (p[n] && p[n] != ')' && p[n] != ' ' && p[n] != '(')
        n++;
    return p[n] == ')' && (p[n + 1] == '\0' || p[n + 1] == ' ') ? n + 1 : 0;
}

char *mt_caller_label_compact(char *buf)
{
    char *out = buf;
    for (const char *p = buf; *p;) {
        size_t skip = where_len(p);
        if (skip)
            p += skip;
        else
            *out++ = *p++;
    }
    *out = '\0';
    return buf;
}

char *mt_caller_label_join(const mt_locator *loc, const mt_caller_row *r, bool utf8, char *buf,
                           size_t size)
{
    return mt_caller_label_join_by(locator_callers, (void *)loc, r, utf8, buf, size);
}
