/* record_tag_pairs.c -- version 8's paired tags, the writer's side
 * (record_tag_pairs.h says what and why).
 *
 * The counts: an open-addressing table of SLOTS keys (context, first tag,
 * second tag), each with its count in the current frame and its code in
 * the table that holds now (MT_DAT_TAG_ESCAPE: none).  A key that finds
 * the table full (KEYS_MAX, so that probes stay short) is not counted and
 * is escaped.  Coding a record is one pass over its tags: per pair a
 * probe, a count, and the code (with the pair after it, kept only for an
 * escape: no branch).
 *
 * A table, from the counts: per context, the pairs counted twice or more,
 * most frequent first (ties: the smaller pair value first), at most
 * MT_DAT_TAG_PAIRS_MAX; contexts ascending (one sort of packed keys).  It
 * is serialized at once as TAG_PAIRS' payload and its codes put in the
 * slots; it holds once emitted, until the frame ends.  At a frame's end
 * the counts restart: the slots keep only the keys of the table just
 * built (the next frame's, emitted before its first EVENTS2 record).
 */
#define _GNU_SOURCE
#include "record_tag_pairs.h"

#include "core_assert.h"
#include "core_common.h"
#include "core_os_memory.h"
#include "dat_format.h"
#include "record_writer.h"

#include <string.h>

#define SLOT_BITS 12u
#define SLOTS (1u << SLOT_BITS)
#define KEYS_MAX (SLOTS * 3u / 4u)
#ifndef MT_TP_STALE
/* A table that escaped one pair in this many of the MT_TP_ENOUGH << k or
 * more it coded is replaced, k the tables the frame replaced so far (a
 * stream whose tags are that diverse pays a table per doubling of its
 * pairs, not every MT_TP_ENOUGH; 0: never).  The bench, 1M steps, 3 runs each: at
 * 4 threads escapes 354 k -> 100-126 k, the file 0.2-0.4 % smaller (within the runs' noise); at 1
 * thread 3.38-3.46 MB against 3.46-3.49 MB without it (and 3.45-3.48 MB for version 7). */
#define MT_TP_STALE 8u
#endif
#define NO_CODE MT_DAT_TAG_ESCAPE
#define CODES_MAX (MT_RR_EVENTS_MAX / 2u * 3u + 1u) /* every pair escaped, an odd tag */
/* TAG_PAIRS: v ncontexts, per context v context and v npairs (2 bytes
 * each at most), a pair 3 bytes at most, KEYS_MAX pairs at most. */
#define TABLE_BYTES (2u + MT_DAT_TAG_CONTEXTS * 4u + KEYS_MAX * 3u)

typedef struct tp_slot {
    uint32_t key; /* (context << 16 | pair) + 1, pair = first | second << 8; 0: empty */
    uint32_t count;
} tp_slot;

typedef struct tp_mem {
    tp_slot slot[SLOTS];
    uint8_t code[SLOTS];              /* the key's code in the table, or NO_CODE */
    uint64_t sorted[SLOTS];           /* a table being built: packed keys */
    unsigned char table[TABLE_BYTES]; /* the TAG_PAIRS payload built last */
    unsigned char codes[CODES_MAX];   /* a record's tags column, coded */
} tp_mem;

static struct {
    tp_mem *m;
    uint32_t keys;           /* slots in use */
    uint64_t pairs;          /* pairs counted in the current frame */
    size_t table_len;        /* a table built and not emitted yet: its payload's bytes; 0: none */
    bool holds;              /* a TAG_PAIRS holds in the current frame */
    uint64_t coded, escaped; /* pairs coded with it, and escaped */
    unsigned replaced;       /* stale tables this frame replaced (each waits twice as long) */
    uint64_t retry_at;       /* pairs before the frame's own counts are tried again */
    bool no_memory;          /* the mmap failed: not tried again until a new file */
    mt_tp_stats stats;
} g;

static inline uint32_t slot_of(const tp_mem *m, uint32_t key)
{
    uint32_t h = (key * 0x9e3779b1u) >> (32u - SLOT_BITS);
    while (m->slot[h].key != key && m->slot[h].key)
        h = (h + 1u) & (SLOTS - 1u);
    return h;
}

/* Counts pair key (+ 1) and returns its code, NO_CODE if it has none. */
static inline __attribute__((always_inline)) unsigned count_pair(tp_mem *m, uint32_t key)
{
    uint32_t h = slot_of(m, key);
    if (MT_UNLIKELY(!m->slot[h].key)) {
        if (g.keys >= KEYS_MAX)
            return NO_CODE; /* not counted: escaped */
        m->slot[h].key = key;
        m->code[h] = NO_CODE;
        g.keys++;
    }
    m->slot[h].count++;
    return m->code[h];
}

static void clear(tp_mem *m)
{
    memset(m->slot, 0, sizeof m->slot);
    memset(m->code, NO_CODE, sizeof m->code);
    g.keys = 0;
}

static bool ready(void)
{
    if (!g.m && !g.no_memory) {
        g.m = mt_os_alloc(sizeof *g.m);
        if (g.m)
            clear(g.m);
        g.no_memory = !g.m; /* tags as they are, without a syscall a record */
    }
    return g.m != NULL;
}

static void sift(uint64_t *a, uint32_t i, uint32_t n)
{
    for (uint32_t c; (c = 2u * i + 1u) < n; i = c) {
        if (c + 1u < n && a[c + 1u] > a[c])
            c++;
        if (a[i] >= a[c])
            return;
        uint64_t t = a[i];
        a[i] = a[c];
        a[c] = t;
    }
}

/* Heapsort: in place, no memory (qsort may call malloc). */
static void sort_keys(uint64_t *a, uint32_t n)
{
    for (uint32_t i = n / 2u; i-- > 0;)
        sift(a, i, n);
    for (uint32_t e = n; e-- > 1u;) {
        uint64_t t = a[0];
        a[0] = a[e];
        a[e] = t;
        sift(a, 0, e);
    }
}

/* A table from the counts: its payload in m->table (g.table_len), its
 * codes in the slots; none when no pair was counted twice (g.table_len 0,
 * the codes as they were). */
static void build_table(tp_mem *m)
{
    uint32_t k = 0;
    for (uint32_t h = 0; h < SLOTS; h++) {
        const tp_slot *s = &m->slot[h];
        if (s->key && s->count >= 2u) /* context, then count descending, then pair */
            m->sorted[k++] = (uint64_t)((s->key - 1u) >> 16) << 48 |
                             (uint64_t)(UINT32_MAX - s->count) << 16 | ((s->key - 1u) & 0xffffu);
    }
    g.table_len = 0;
    if (!k)
        return; /* the codes stay: a table that holds keeps holding */
    memset(m->code, NO_CODE, sizeof m->code);
    sort_keys(m->sorted, k);
    uint32_t nctx = 0;
    for (uint32_t i = 0; i < k; i++)
        nctx += i == 0 || m->sorted[i] >> 48 != m->sorted[i - 1u] >> 48;
    mt_rec_buf b = {m->table, 0, sizeof m->table, false};
    mt_put_v(&b, nctx);
    for (uint32_t i = 0, j; i < k; i = j) {
        uint32_t ctx = (uint32_t)(m->sorted[i] >> 48);
        for (j = i; j < k && m->sorted[j] >> 48 == ctx; j++)
            ;
        uint32_t npairs = j - i < MT_DAT_TAG_PAIRS_MAX ? j - i : MT_DAT_TAG_PAIRS_MAX;
        mt_put_v(&b, ctx);
        mt_put_v(&b, npairs);
        for (uint32_t x = 0; x < npairs; x++) {
            uint32_t pair = (uint32_t)(m->sorted[i + x] & 0xffffu);
            mt_put_v(&b, pair);
            m->code[slot_of(m, (ctx << 16 | pair) + 1u)] = (uint8_t)x;
        }
    }
    MT_ASSERT(!b.overflow); /* TABLE_BYTES bounds every table */
    g.table_len = b.overflow ? 0 : b.len;
    if (b.overflow) /* never: escapes are right under any table */
        memset(m->code, NO_CODE, sizeof m->code);
}

void mt_tp_before_record(void)
{
    MT_ASSERT(mt_w.pay.len == 0);
    bool stale = g.holds && g.replaced < 16u && g.coded >= (uint64_t)MT_TP_ENOUGH << g.replaced &&
                 g.escaped * MT_TP_STALE >= g.coded;
    if ((g.holds && !stale) || !ready())
        return;
    if (stale || (!g.table_len && g.pairs >= MT_TP_ENOUGH && g.pairs >= g.retry_at)) {
        g.coded = g.escaped = 0;
        g.replaced += stale;
        build_table(g.m); /* the frame's own counts */
        /* none (no pair seen twice): not every record's scan of the
         * slots, but once the frame's pairs have doubled */
        g.retry_at = g.table_len ? 0 : 2u * g.pairs;
    }
    if (!g.table_len)
        return;
    mt_put_bytes(&mt_w.pay, g.m->table, g.table_len);
    g.table_len = 0;
    g.holds = true;
    g.coded = g.escaped = 0;
    g.stats.tables++;
    /* If it ends the frame (record_zstd.c: a small one), the caller's open
     * record is written first, coded with this table; then none holds. */
    mt_recw_emit(MT_DAT_REC_TAG_PAIRS);
}

const unsigned char *mt_tp_code(const unsigned char *tags, uint32_t n, size_t *len)
{
    tp_mem *m = g.m;
    MT_ASSERT(n <= MT_RR_EVENTS_MAX); /* m->codes holds CODES_MAX */
    *len = n;
    if (!m)
        return tags;
    uint32_t c = 0, i = 0;
    g.pairs += n / 2u;
    if (!g.holds) { /* counted only */
        for (; i + 1u < n; i += 2u) {
            count_pair(m, (c << 16 | (uint32_t)tags[i + 1u] << 8 | tags[i]) + 1u);
            c = tags[i + 1u];
        }
        return tags;
    }
    unsigned char *o = m->codes;
    uint64_t escapes = 0;
    for (; i + 1u < n; i += 2u) {
        unsigned a = tags[i], b = tags[i + 1u];
        unsigned x = count_pair(m, (c << 16 | b << 8 | a) + 1u);
        bool esc = x == MT_DAT_TAG_ESCAPE;
        o[0] = (unsigned char)x; /* the pair after it stays only for an escape */
        o[1] = (unsigned char)a;
        o[2] = (unsigned char)b;
        o += 1u + 2u * esc;
        escapes += esc;
        c = b;
    }
    if (n & 1u)
        *o++ = tags[n - 1u];
    g.stats.escapes += escapes;
    g.escaped += escapes;
    g.coded += n / 2u;
    g.stats.coded_records++;
    *len = (size_t)(o - m->codes);
    MT_ASSERT(*len <= CODES_MAX);
    return m->codes;
}

void mt_tp_new_frame(void)
{
    tp_mem *m = g.m;
    g.holds = false;
    g.replaced = 0;
    g.retry_at = 0;
    g.table_len = 0;
    if (!m)
        return;
    if (g.pairs >= MT_TP_ENOUGH)
        build_table(m); /* the next frame's */
    if (!g.table_len)
        memset(m->code, NO_CODE, sizeof m->code);
    g.pairs = 0;
    /* The counts restart: the table's keys stay, with their codes. */
    uint32_t k = 0;
    for (uint32_t h = 0; h < SLOTS; h++)
        if (m->code[h] != NO_CODE)
            m->sorted[k++] = (uint64_t)m->slot[h].key << 8 | m->code[h];
    clear(m);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t key = (uint32_t)(m->sorted[i] >> 8), h = slot_of(m, key);
        m->slot[h].key = key;
        m->code[h] = (uint8_t)m->sorted[i];
    }
    g.keys = k;
}

void mt_tp_new_file(void)
{
    g.holds = false;
    g.replaced = 0;
    g.retry_at = 0;
    g.no_memory = false;
    g.table_len = 0;
    g.pairs = 0;
    if (g.m)
        clear(g.m);
}

void mt_tp_child_reset(void)
{
    mt_reset_zero(&g, sizeof g); /* MT_RESET: no page copied for nothing */
}

void mt_tp_release(void)
{
    tp_mem *m = g.m;
    memset(&g, 0, sizeof g); /* the pointer first, as mt_rbuf_free */
    mt_os_free(m, sizeof *m);
}

const mt_tp_stats *mt_tp_get_stats(void)
{
    return &g.stats;
}
