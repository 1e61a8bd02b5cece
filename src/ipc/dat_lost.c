/* dat_lost.c -- the causes of a recording's dropped events (LOST records,
 * dat_format.h MT_DAT_LOST_*) in words: one table, so that the viewer, the
 * batch summary and the exports name a cause the same way. */
#include "dat_lost.h"

#include <stdio.h>

static const struct {
    const char *words, *key;
} g_causes[MT_DAT_LOST_WHY_N] = {
    [MT_DAT_LOST_DISK] = {"disk behind", "disk_behind"},
    [MT_DAT_LOST_WAIT_CAP] = {"writer stalled (wait cap)", "writer_starved"},
    [MT_DAT_LOST_NOWAIT] = {"hook could not wait", "could_not_wait"},
    [MT_DAT_LOST_NO_BUFFER] = {"no buffer memory", "no_buffer"},
    [MT_DAT_LOST_CAPTURE] = {"initial-state capture", "initial_capture"},
    [MT_DAT_LOST_UNSEEN] = {"missed at the end", "missed_at_end"},
    [MT_DAT_LOST_OTHER] = {"other cause", "other"},
    [MT_DAT_LOST_NOT_SAID] = {"cause not recorded", "not_recorded"},
};
_Static_assert(MT_DAT_LOST_CAUSES == 6, "a word for every cause");

const char *mt_dat_lost_words(unsigned why)
{
    return why < MT_DAT_LOST_WHY_N ? g_causes[why].words : "?";
}

const char *mt_dat_lost_key(unsigned why)
{
    return why < MT_DAT_LOST_WHY_N ? g_causes[why].key : "?";
}

char *mt_dat_lost_line(uint64_t total, const uint64_t why[MT_DAT_LOST_WHY_N], char *buf, size_t n)
{
    uint64_t sum = 0, shown[MT_DAT_LOST_WHY_N];
    for (unsigned i = 0; i < MT_DAT_LOST_WHY_N; i++) {
        shown[i] = why[i];
        sum = mt_dat_lost_add(sum, why[i]);
    }
    if (total > sum) /* TOTALS or END count drops whose LOST record is not read (yet) */
        shown[MT_DAT_LOST_NOT_SAID] += total - sum;
    if (sum > total)
        total = sum;
    size_t k = 0;
    int w =
        snprintf(buf, n, "%llu event%s dropped", (unsigned long long)total, total == 1 ? "" : "s");
    k = w < 0 ? 0 : (size_t)w;
    const char *sep = ": ";
    for (unsigned i = 0; i < MT_DAT_LOST_WHY_N && k < n; i++) {
        if (!shown[i])
            continue;
        w = snprintf(buf + k, n - k, "%s%s %llu", sep, g_causes[i].words,
                     (unsigned long long)shown[i]);
        k += w < 0 ? 0 : (size_t)w;
        sep = ", ";
    }
    return buf;
}
