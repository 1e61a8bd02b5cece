/* columns.c -- the table's numeric columns (see columns.h). */
#include "columns.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

const mt_column mt_columns[MT_COLS] = {
    [MT_COL_LIVE] = {"LIVE", true, 11, MT_SORT_LIVE}, /* "-1023.9 KiB" since a baseline */
    [MT_COL_BLOCKS] = {"BLOCKS", true, 8, MT_SORT_COUNT},
    [MT_COL_GROWTH] = {"GROWTH/s", false, 11, MT_SORT_GROWTH},
    [MT_COL_ALLOCS] = {"ALLOC/s", false, 8, MT_SORT_ALLOCS},
    [MT_COL_TEMP] = {"TEMP%", false, 6, MT_SORT_TEMPORARY},
    [MT_COL_LEAK] = {"LEAK", false, 4, MT_SORT_LEAK},
};

int mt_columns_width(void)
{
    int w = 0;
    for (int c = 0; c < MT_COLS; c++)
        w += mt_columns[c].width + 1;
    return w + 1;
}

void mt_column_heading(const char *h, int w, bool est, const char *delta, char *buf, size_t n)
{
    bool d = delta != NULL;
    const char *e = est && 1 + (int)d + (int)strlen(h) <= w ? "~" : "";
    snprintf(buf, n, "%s%s%s", e, d ? delta : "", h);
}

typedef char *(*fmt_fn)(uint64_t v, char *buf, size_t n);

/* v formatted by fmt; with a sign when it is a change (delta). */
static void signed_fig(fmt_fn fmt, double v, bool delta, char *buf, size_t n)
{
    char b[32];
    fmt((uint64_t)fabs(v), b, sizeof b);
    if (delta && v != 0)
        snprintf(buf, n, "%c%s", v < 0 ? '-' : '+', b);
    else
        snprintf(buf, n, "%s", b);
}

void mt_column_text(int c, const mt_table_row *r, bool delta, bool rates_known, char *buf, size_t n)
{
    char b[32];
    switch (c) {
    case MT_COL_LIVE:
        signed_fig(mt_fmt_bytes, r->live_bytes, delta, buf, n);
        return;
    case MT_COL_BLOCKS:
        signed_fig(mt_fmt_count, r->live_count, delta, buf, n);
        return;
    case MT_COL_GROWTH:
        if (fabs(r->growth_bps) < 0.5)
            snprintf(buf, n, "0");
        else
            signed_fig(mt_fmt_bytes, r->growth_bps, true, buf, n);
        return;
    case MT_COL_ALLOCS:
        if (!rates_known)
            snprintf(buf, n, "-");
        else
            snprintf(buf, n, "%s", mt_fmt_count((uint64_t)(r->allocs_ps + 0.5), b, sizeof b));
        return;
    case MT_COL_TEMP:
        snprintf(buf, n, "%.0f%%", 100.0 * r->temp_share);
        return;
    case MT_COL_LEAK:
        snprintf(buf, n, "%.0f", r->leak.score);
        return;
    }
    buf[0] = 0;
}
