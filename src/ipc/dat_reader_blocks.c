/* dat_reader_blocks.c -- the reader's EVENTS2 frame context (see .h): an
 * open-addressing table (trace, serial) -> block with linear probing and
 * backward-shift deletion; a slot of another epoch is empty. */
#include "dat_reader_blocks.h"

#include "big_table.h"
#include "dat_format.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BITS 10u
#define MAX_BITS 34u
#define TRACES_MIN 256u

#define EPOCH_MASK (((uint64_t)1 << MT_DSLOT_EPOCH_BITS) - 1)
#define SIZE_MASK (((uint64_t)1 << MT_DVAL_SIZE_BITS) - 1)
#define BIRTH_SPAN ((uint64_t)1 << (63u - MT_DVAL_SIZE_BITS)) /* births base_ms + [0, span) */

_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= (1ull << (32u - MT_DSLOT_EPOCH_BITS)),
               "a frame's serials fit in a block slot's key");

void mt_dctx_init(mt_dctx *c)
{
    memset(c, 0, sizeof *c);
    c->epoch = 1;
}

void mt_dctx_free(mt_dctx *c)
{
    free(c->traces);
    free(c->wide);
    if (c->blocks)
        mt_big_free(c->blocks, (size_t)1 << c->bits, sizeof *c->blocks);
    memset(c, 0, sizeof *c);
}

/* A new epoch: the slots keep only its low bits, so the table is cleared
 * when those wrap (once in 2^MT_DSLOT_EPOCH_BITS frames); the traces keep
 * all 32, cleared when they wrap.  Epoch 0 (low bits 0) is never current. */
void mt_dctx_new_frame(mt_dctx *c)
{
    c->count = 0;
    c->frame_allocs = 0;
    c->nwide = c->wide_free = 0;
    if ((++c->epoch & EPOCH_MASK) != 0)
        return;
    if (c->blocks)
        memset(c->blocks, 0, ((size_t)1 << c->bits) * sizeof *c->blocks);
    if (c->epoch == 0 && c->traces) /* wrapped: old states could look current */
        memset(c->traces, 0, c->ntraces * sizeof *c->traces);
    c->epoch++;
}

mt_dtrace *mt_dctx_trace_slow(mt_dctx *c, uint32_t trace)
{
    if (trace >= c->ntraces) {
        uint64_t cap = c->ntraces ? c->ntraces : TRACES_MIN;
        while (cap <= trace)
            cap *= 2;
        mt_dtrace *t = realloc(c->traces, cap * sizeof *t);
        if (!t)
            return NULL;
        memset(t + c->ntraces, 0, (cap - c->ntraces) * sizeof *t);
        c->traces = t;
        c->ntraces = cap;
    }
    mt_dtrace *t = &c->traces[trace];
    if (t->epoch != c->epoch) {
        t->epoch = c->epoch;
        t->has_size = t->live = 0;
        t->next = 0;
        t->count = t->given = 0;
    }
    return t;
}

static uint64_t key_of(const mt_dctx *c, uint32_t trace, uint64_t serial)
{
    return mt_dctx_key(c, trace, serial);
}

static bool current(const mt_dctx *c, const mt_dblock *b)
{
    return (b->key & EPOCH_MASK) == (c->epoch & EPOCH_MASK);
}

static uint64_t home(uint64_t key, unsigned bits)
{
    return mt_dctx_home(key, bits);
}

/* The slot holding key, or the empty slot where it would go. */
static inline __attribute__((always_inline)) mt_dblock *find(const mt_dctx *c, uint64_t key)
{
    uint64_t mask = ((uint64_t)1 << c->bits) - 1;
    for (uint64_t i = home(key, c->bits);; i = (i + 1) & mask) {
        mt_dblock *b = &c->blocks[i];
        if (b->key == key || ((b->key ^ key) & EPOCH_MASK)) /* key, or another epoch's */
            return b;
    }
}

static __attribute__((noinline, cold)) bool grow(mt_dctx *c)
{
    unsigned bits = c->blocks ? c->bits + 1 : MIN_BITS;
    if (bits > MAX_BITS)
        return false;
    mt_dblock *old = c->blocks;
    unsigned old_bits = c->bits;
    mt_dblock *b = mt_big_calloc((size_t)1 << bits, sizeof *b);
    if (!b)
        return false;
    c->blocks = b;
    c->bits = bits;
    c->grow_at = ((uint64_t)7 << bits) / 10;
    for (uint64_t i = 0; old && i < ((uint64_t)1 << old_bits); i++)
        if (current(c, &old[i]))
            *find(c, old[i].key) = old[i];
    if (old)
        mt_big_free(old, (size_t)1 << old_bits, sizeof *old);
    return true;
}

/* A wide entry for a block whose size or birth does not fit in val: its
 * index, or UINT64_MAX when out of memory.  Reused through the free list. */
static __attribute__((noinline, cold)) uint64_t wide_new(mt_dctx *c, uint64_t size,
                                                         uint64_t birth_ms)
{
    uint64_t i = c->wide_free - 1;
    if (c->wide_free)
        c->wide_free = c->wide[i].size;
    else if (mt_grow((void **)&c->wide, &c->wide_cap, c->nwide + 1, sizeof *c->wide) == 0)
        i = c->nwide++;
    else
        return UINT64_MAX;
    c->wide[i] = (mt_dwide){size, birth_ms};
    return i;
}

/* The val of a block: packed, or a wide entry.  false when out of memory. */
static bool val_of(mt_dctx *c, uint64_t size, uint64_t birth_ms, uint64_t *val)
{
    if (c->count == 0) /* nothing packed against the old base */
        c->base_ms = birth_ms > BIRTH_SPAN / 2 ? birth_ms - BIRTH_SPAN / 2 : 0;
    uint64_t off = birth_ms - c->base_ms;
    if (size <= SIZE_MASK && off < BIRTH_SPAN) { /* modulo 2^64: unpack adds it back */
        *val = off << MT_DVAL_SIZE_BITS | size;
        return true;
    }
    uint64_t i = wide_new(c, size, birth_ms);
    *val = MT_DVAL_WIDE | i;
    return i != UINT64_MAX;
}

/* A slot's size and birth; its wide entry, if any, goes to the free list
 * when `drop`. */
static void unpack(mt_dctx *c, uint64_t val, uint64_t *size, uint64_t *birth_ms, bool drop)
{
    if (!(val & MT_DVAL_WIDE)) {
        *size = val & SIZE_MASK;
        *birth_ms = c->base_ms + (val >> MT_DVAL_SIZE_BITS);
        return;
    }
    uint64_t i = val & ~MT_DVAL_WIDE;
    *size = c->wide[i].size;
    *birth_ms = c->wide[i].birth_ms;
    if (drop) {
        c->wide[i].size = c->wide_free;
        c->wide_free = i + 1;
    }
}

/* Puts a block into the table (it is new there: serials only grow). */
static mt_errc insert(mt_dctx *c, uint32_t trace, uint64_t serial, uint64_t size, uint64_t birth_ms,
                      mt_err *err)
{
    uint64_t val;
    if (c->count >= c->grow_at && !grow(c))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
    if (!val_of(c, size, birth_ms, &val))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the live blocks of a frame");
    uint64_t key = key_of(c, trace, serial);
    *find(c, key) = (mt_dblock){key, val};
    c->count++;
    return MT_OK;
}

mt_errc mt_dctx_too_many(mt_err *err)
{
    return mt_err_set(err, MT_E_CORRUPT,
                      "corrupt recording: more than %u allocations in one "
                      "frame",
                      MT_DAT_FRAME_ALLOCS_MAX);
}

/* Block count - MT_DRECENT, still live in recent slot i: to the table. */
mt_errc mt_dctx_spill(mt_dctx *c, mt_dtrace *t, uint32_t trace, unsigned i, mt_err *err)
{
    return insert(c, trace, t->count - MT_DRECENT, t->recent[i].size, t->recent[i].birth_ms, err);
}

static void remove_at(mt_dctx *c, mt_dblock *hole)
{
    uint64_t mask = ((uint64_t)1 << c->bits) - 1;
    uint64_t i = (uint64_t)(hole - c->blocks);
    for (uint64_t j = (i + 1) & mask; current(c, &c->blocks[j]); j = (j + 1) & mask) {
        uint64_t k = home(c->blocks[j].key, c->bits);
        bool stays = i <= j ? (k > i && k <= j) : (k > i || k <= j);
        if (stays)
            continue;
        c->blocks[i] = c->blocks[j];
        i = j;
    }
    c->blocks[i].key = 0; /* epoch bits 0: never current */
    c->count--;
}

bool mt_dctx_take_old(mt_dctx *c, uint32_t trace, uint64_t serial, uint64_t *size,
                      uint64_t *birth_ms)
{
    if (!c->blocks)
        return false;
    mt_dblock *b = find(c, key_of(c, trace, serial));
    if (!current(c, b))
        return false;
    unpack(c, b->val, size, birth_ms, true);
    remove_at(c, b);
    return true;
}

/* Blocks on their way to a give's fn, MT_DAT_BLOCKS_PER_CALL at a time. */
typedef struct giving {
    mt_dat_block b[MT_DAT_BLOCKS_PER_CALL];
    size_t n;
    mt_dat_block_fn fn;
    void *ctx;
} giving;

static int give_one(giving *g, uint32_t trace, uint64_t size, uint64_t birth_ms)
{
    g->b[g->n++] = (mt_dat_block){trace, size, birth_ms};
    if (g->n < MT_DAT_BLOCKS_PER_CALL)
        return 0;
    g->n = 0;
    return g->fn(g->ctx, g->b, MT_DAT_BLOCKS_PER_CALL);
}

/* The recent blocks of one trace's state not given yet.  Slot i holds the
 * block k of count - MT_DRECENT <= k < count with k % MT_DRECENT == i. */
static int give_recent(const mt_dtrace *t, uint32_t trace, giving *g)
{
    for (unsigned i = 0; i < MT_DRECENT; i++) {
        uint64_t k = t->count - MT_DRECENT + (i + MT_DRECENT - t->count % MT_DRECENT) % MT_DRECENT;
        bool give = (t->live & (1u << i)) && k >= t->given;
        int rc = give ? give_one(g, trace, t->recent[i].size, t->recent[i].birth_ms) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

static int give_all(mt_dctx *c, giving *g)
{
    for (uint64_t i = 0; i < c->ntraces; i++) {
        int rc = c->traces[i].epoch == c->epoch ? give_recent(&c->traces[i], (uint32_t)i, g) : 0;
        if (rc)
            return rc;
    }
    /* the walk of the whole table, the cost of a give: its bounds and the
     * epoch in locals (give_one's call made the compiler reload them) */
    const mt_dblock *b = c->blocks, *end = b && c->count ? b + ((uint64_t)1 << c->bits) : b;
    const uint64_t epoch = c->epoch & EPOCH_MASK;
    for (; b < end; b++) {
        if ((b->key & EPOCH_MASK) != epoch)
            continue;
        uint32_t trace = (uint32_t)(b->key >> 32);
        uint64_t serial = (b->key & 0xffffffffu) >> MT_DSLOT_EPOCH_BITS, size, birth_ms;
        if (serial < c->traces[trace].given)
            continue;
        unpack(c, b->val, &size, &birth_ms, false);
        int rc = give_one(g, trace, size, birth_ms);
        if (rc)
            return rc;
    }
    return g->n ? g->fn(g->ctx, g->b, g->n) : 0;
}

int mt_dctx_give(mt_dctx *c, mt_dat_block_fn fn, void *ctx)
{
    giving g = {.n = 0, .fn = fn, .ctx = ctx};
    int rc = give_all(c, &g);
    if (rc)
        return rc;
    for (uint64_t i = 0; i < c->ntraces; i++)
        if (c->traces[i].epoch == c->epoch)
            c->traces[i].given = c->traces[i].count;
    return 0;
}
