/* sort_rows.c -- the table's sort: rows by key descending, then live bytes
 * descending, then trace id ascending.
 *
 * Why not qsort: at 100,000 rows every refresh, a comparison sort through a
 * function pointer was a quarter of the viewer's CPU.  Each key is mapped to
 * an integer code whose ascending order is the wanted order (mt_sort_code),
 * and the entries are sorted by a stable LSD radix sort, one byte per pass,
 * least significant criterion first (id, then live bytes, then the key).
 * A first pass finds the bytes that differ between entries: a byte that is
 * the same in every entry (high bytes of small counts, low mantissa bytes of
 * integers, ids when the rows come in id order) needs no pass, so a typical
 * sort makes 3 to 10 passes over 24-byte entries.  Ties keep the order of the previous passes:
 * equal (key, live, id) cannot happen for distinct traces. */
#include "table_priv.h"

#include <string.h>

/* The three criteria, least significant first: each a 64-bit word of the
 * entry (id: its 32 bits). */
enum { BY_ID, BY_TIE, BY_KEY, WORDS };

uint64_t mt_sort_code(double x)
{
    if (x == 0)
        x = 0.0; /* -0 == +0 */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u = (u >> 63) ? ~u : u | (1ull << 63); /* ascending with x */
    return ~u;                             /* descending */
}

static inline uint64_t word(const mt_sort_ent *e, int w)
{
    return w == BY_KEY ? e->key : w == BY_TIE ? e->tie : e->id;
}

/* Bytes that differ between entries: OR of all XORed with AND of all. */
static void varying(const mt_sort_ent *e, size_t n, uint64_t *diff)
{
    for (int w = 0; w < WORDS; w++) {
        uint64_t all_or = 0, all_and = ~0ull;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = word(&e[i], w);
            all_or |= v;
            all_and &= v;
        }
        diff[w] = all_or ^ all_and;
    }
}

typedef struct digit {
    int w;          /* word */
    unsigned shift; /* of the byte in it */
} digit;

static unsigned byte_of(const mt_sort_ent *e, digit d)
{
    return (unsigned)(word(e, d.w) >> d.shift) & 0xff;
}

static void histogram(const mt_sort_ent *e, size_t n, digit d, uint32_t *count)
{
    memset(count, 0, 256 * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[byte_of(&e[i], d)]++;
}

/* One stable pass on digit d from src to dst (count: its histogram), counting
 * the next digit's bytes on the way (next.w < 0: none). */
static void scatter(const mt_sort_ent *src, mt_sort_ent *dst, size_t n, digit d,
                    const uint32_t *count, digit next, uint32_t *next_count)
{
    size_t pos[256], sum = 0;
    for (unsigned b = 0; b < 256; b++) {
        pos[b] = sum;
        sum += count[b];
    }
    if (next.w < 0) {
        for (size_t i = 0; i < n; i++)
            dst[pos[byte_of(&src[i], d)]++] = src[i];
        return;
    }
    memset(next_count, 0, 256 * sizeof *next_count);
    for (size_t i = 0; i < n; i++) {
        next_count[byte_of(&src[i], next)]++;
        dst[pos[byte_of(&src[i], d)]++] = src[i];
    }
}

/* The digits that need a pass, least significant first; how many. */
static unsigned digits_of(const uint64_t *diff, digit *out)
{
    unsigned k = 0;
    for (int w = 0; w < WORDS; w++)
        for (unsigned shift = 0; shift < 64; shift += 8)
            if ((diff[w] >> shift) & 0xff) /* else every entry has the same byte here */
                out[k++] = (digit){w, shift};
    return k;
}

void mt_sort_ents(mt_sort_ent *ents, mt_sort_ent *tmp, size_t n, bool use_tie, bool by_id)
{
    if (n < 2)
        return;
    uint64_t diff[WORDS];
    varying(ents, n, diff);
    if (!by_id)
        diff[BY_ID] = 0;
    if (!use_tie)
        diff[BY_TIE] = 0;
    digit d[WORDS * 8];
    unsigned nd = digits_of(diff, d);
    mt_sort_ent *src = ents, *dst = tmp;
    uint32_t count[2][256];
    if (nd)
        histogram(src, n, d[0], count[0]);
    for (unsigned j = 0; j < nd; j++) {
        digit next = j + 1 < nd ? d[j + 1] : (digit){-1, 0};
        scatter(src, dst, n, d[j], count[j % 2], next, count[(j + 1) % 2]);
        mt_sort_ent *t = src;
        src = dst;
        dst = t;
    }
    if (src != ents)
        memcpy(ents, src, n * sizeof *ents);
}
