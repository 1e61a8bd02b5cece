/* record_blocks.c -- the writer's EVENTS2 frame context (see .h): an
 * open-addressing map address -> block (linear probing) of 16-byte slots,
 * emptied at a frame boundary.  A block taken by its free leaves a dead
 * entry that keeps its address (a tombstone): no backward shift walks
 * the rest of its cluster (callgrind: ~50 instructions per named free),
 * and the next allocation at that address, which allocators hand out
 * again soon, takes the slot back.  So the map fills with the distinct
 * addresses of a frame's allocations rather than the live ones; a growth
 * drops the dead entries, and at the frame's end the map becomes the
 * previous frame's map as it is, and the frame before's, emptied, the
 * current one.
 * Per-trace state belongs to an epoch, the current frame's number: a
 * trace of another epoch is reset lazily (its count becoming prev_count
 * when that epoch was the frame before), so a new frame does not touch
 * the array.
 */
#include "record_blocks.h"

#include "dat_format.h"
#include "core_os_memory.h"
#include "table_trace.h"

#include <string.h>

#define MAP_MIN_BITS 14u /* 16 Ki slots, 256 KiB */
#define MAP_MAX_BITS 30u
#define TRACES_MIN 1024u

/* A slot packs a block into 16 bytes, so that the map of a frame's live
 * blocks takes half the cache lines and TLB reach of the plain 32-byte
 * struct (the writer's time is this map's misses, docs/performance.md):
 *   key: the address (ADDR_BITS) | birth_ms - base_ms (signed, BIRTH_BITS) << ADDR_BITS
 *   val: trace | serial << TRACE_BITS | size << (TRACE_BITS + SERIAL_BITS)
 * key 0 is an empty slot (no block lives at address 0).  A block whose
 * fields do not fit is not kept: its free is written in full. */
#define ADDR_BITS 48u
#define BIRTH_BITS (64u - ADDR_BITS)
#define TRACE_BITS 22u  /* MT_TRACE_MAX */
#define SERIAL_BITS 19u /* MT_DAT_FRAME_ALLOCS_MAX */
#define SIZE_BITS (64u - TRACE_BITS - SERIAL_BITS)
#define LOW(bits) (((uint64_t)1 << (bits)) - 1)

_Static_assert(MT_TRACE_MAX <= LOW(TRACE_BITS) + 1, "every trace id fits a slot");
_Static_assert(MT_DAT_FRAME_ALLOCS_MAX <= LOW(SERIAL_BITS) + 1, "every serial of a frame fits");

typedef mt_rb_slot slot;

mt_rb_hot mt_rb_h;

static struct {
    uint64_t count, peak; /* entries of this frame; most this frame */
    bool have_base;
    uint64_t base_ms;
    uint64_t pbase_ms;   /* base_ms of the frame before: its entries' births are above it */
    uint32_t full_epoch; /* the array could not grow in this epoch */
    mt_rb_stats stats;
} g;

static uint64_t key_addr(uint64_t key)
{
    return key & LOW(ADDR_BITS);
}

static int64_t key_birth(uint64_t key)
{
    return (int64_t)key >> ADDR_BITS; /* arithmetic shift: the signed difference */
}

/* A dead entry: its value is the one pack() never stores, all ones (the
 * last trace id, serial and size at once). */
#define DEAD_VAL UINT64_MAX

static bool dead(const slot *s)
{
    return s->val == DEAD_VAL;
}

static void kill(slot *s)
{
    s->val = DEAD_VAL;
}

static size_t map_bytes(unsigned bits)
{
    return ((size_t)1 << bits) * sizeof(slot);
}

static uint64_t home(uint64_t addr, unsigned bits)
{
    return mt_rb_home(addr, bits);
}

/* A table of 2^bits empty slots instead of the current one, which holds
 * nothing (a new frame) or whose entries the caller moves.  On huge pages
 * from 2 MiB on: probed at random, a 4 KiB-page map misses the TLB. */
static slot *new_map(unsigned bits)
{
    return mt_os_alloc_huge(map_bytes(bits));
}

/* The size of map a frame like one that stored `peak` entries wants:
 * room for twice as many at 70 %. */
static unsigned want_bits(uint64_t peak)
{
    unsigned want = MAP_MIN_BITS;
    while (want < MAP_MAX_BITS && ((uint64_t)1 << want) * 7 / 10 < peak * 2)
        want++;
    return want;
}

/* Shrinks the map at a new file when the frame that ended used little of
 * it; true if it did (the new map is empty). */
static bool maybe_shrink(void)
{
    unsigned want = want_bits(g.peak);
    if (!mt_rb_h.map || want >= mt_rb_h.bits)
        return false;
    slot *m = new_map(want);
    if (!m)
        return false;
    mt_os_free(mt_rb_h.map, map_bytes(mt_rb_h.bits));
    mt_rb_h.map = m;
    mt_rb_h.bits = want;
    return true;
}

/* The previous frame's map goes: no block of the frame before is named. */
static void drop_prev(void)
{
    slot *m = mt_rb_h.pmap;
    size_t len = map_bytes(mt_rb_h.pbits);
    mt_rb_h.pmap = NULL; /* first, as mt_rb_release */
    mt_rb_h.pbits = 0;
    mt_os_free(m, len); /* NULL: nothing */
}

/* Clears n bytes at p unless they are all zero already. */
void mt_rb_child_reset(void)
{
    /* each only if some byte of it is set: a page the child does not write is
     * not copied (MT_RESET, core_common.h) */
    mt_reset_zero(&g, sizeof g);
    mt_reset_zero(&mt_rb_h, sizeof mt_rb_h);
}

void mt_rb_release(void)
{
    slot *map = mt_rb_h.map;
    mt_rb_trace *traces = mt_rb_h.traces;
    size_t map_len = map_bytes(mt_rb_h.bits);
    size_t traces_len = (size_t)mt_rb_h.ntraces * sizeof *traces;
    /* the pointers first, as mt_rbuf_free; the epoch stays: a new
     * array's states (epoch 0) are never current */
    mt_rb_h.map = NULL;
    mt_rb_h.bits = 0;
    drop_prev();
    mt_rb_h.traces = NULL;
    mt_rb_h.ntraces = 0;
    g.count = g.peak = 0;
    g.have_base = false;
    mt_os_free(map, map_len); /* NULL: nothing */
    mt_os_free(traces, traces_len);
}

static bool grow_traces(uint32_t trace)
{
    uint32_t cap = mt_rb_h.ntraces ? mt_rb_h.ntraces : TRACES_MIN;
    while (cap <= trace && cap < MT_TRACE_MAX)
        cap *= 2;
    if (cap <= trace)
        return false;
    mt_rb_trace *t = mt_os_alloc((size_t)cap * sizeof *t);
    if (!t)
        return false;
    if (mt_rb_h.traces) {
        memcpy(t, mt_rb_h.traces, (size_t)mt_rb_h.ntraces * sizeof *t);
        mt_os_free(mt_rb_h.traces, (size_t)mt_rb_h.ntraces * sizeof *t);
    }
    mt_rb_h.traces = t;
    mt_rb_h.ntraces = cap;
    return true;
}

mt_rb_trace *mt_rb_trace_slow(uint32_t trace)
{
    /* After a failed growth, traces beyond the array stay without state
     * for the rest of the frame: a state created later in the frame would
     * not have counted the trace's earlier allocations. */
    if (trace >= mt_rb_h.ntraces && (g.full_epoch == mt_rb_h.epoch || !grow_traces(trace))) {
        g.full_epoch = mt_rb_h.epoch;
        return NULL;
    }
    mt_rb_trace *t = &mt_rb_h.traces[trace];
    if (t->epoch != mt_rb_h.epoch) /* its count is the frame before's if that was its epoch */
        *t = (mt_rb_trace){.epoch = mt_rb_h.epoch,
                           .prev_count = t->epoch + 1u == mt_rb_h.epoch ? t->count : 0};
    return t;
}

/* The slot of map m (2^bits slots, never full) holding addr (!= 0), or
 * the empty slot where it would go. */
static slot *find_in(slot *m, unsigned bits, uint64_t addr)
{
    uint64_t mask = LOW(bits);
    for (uint64_t i = home(addr, bits);; i = (i + 1) & mask) {
        slot *s = &m[i];
        if (!s->key || key_addr(s->key) == addr)
            return s;
    }
}

static slot *find(uint64_t addr)
{
    return find_in(mt_rb_h.map, mt_rb_h.bits, addr);
}

/* The live entries of the map. */
static uint64_t count_live(void)
{
    uint64_t live = 0;
    for (uint64_t i = 0; mt_rb_h.map && i < ((uint64_t)1 << mt_rb_h.bits); i++)
        live += mt_rb_h.map[i].key && !dead(&mt_rb_h.map[i]);
    return live;
}

/* A new map for this frame's live entries (the dead stay behind), at
 * most 35 % full with them: the same size when they are few, else
 * larger; false if impossible. */
static bool grow_map(void)
{
    uint64_t live = count_live();
    unsigned bits = mt_rb_h.map ? mt_rb_h.bits : MAP_MIN_BITS;
    while ((live + 1) * 20 > ((uint64_t)7 << bits))
        bits++;
    if (bits > MAP_MAX_BITS)
        return false;
    slot *m = new_map(bits), *old = mt_rb_h.map;
    if (!m)
        return false;
    unsigned old_bits = mt_rb_h.bits;
    mt_rb_h.map = m;
    mt_rb_h.bits = bits;
    for (uint64_t i = 0; old && i < ((uint64_t)1 << old_bits); i++)
        if (old[i].key && !dead(&old[i]))
            *find(key_addr(old[i].key)) = old[i];
    if (old)
        mt_os_free(old, map_bytes(old_bits));
    g.count = live;
    return true;
}

/* The slot's words for a block, or false when a field does not fit. */
static bool pack(uint64_t addr, uint32_t trace, uint64_t serial, uint64_t size, int64_t diff,
                 slot *out)
{
    int64_t half = (int64_t)1 << (BIRTH_BITS - 1);
    if (serial > LOW(SERIAL_BITS) || size > LOW(SIZE_BITS) || trace > LOW(TRACE_BITS) ||
        diff < -half || diff >= half)
        return false;
    out->key = addr | (uint64_t)diff << ADDR_BITS;
    out->val = trace | serial << TRACE_BITS | size << (TRACE_BITS + SERIAL_BITS);
    return out->val != DEAD_VAL;
}

static bool addr_fits(uint64_t addr)
{
    return addr && addr <= LOW(ADDR_BITS);
}

void mt_rb_note_alloc(uint64_t addr, uint32_t trace, uint64_t serial, uint64_t size,
                      uint64_t birth_ms)
{
    if (!g.have_base) {
        g.base_ms = birth_ms;
        g.have_base = true;
    }
    if (!addr_fits(addr) || (!mt_rb_h.map && !grow_map()))
        return; /* never in the map: nothing to forget either */
    slot v, *s = find(addr);
    bool present = s->key != 0; /* live or dead: the slot is taken over */
    if (!pack(addr, trace, serial, size, (int64_t)(birth_ms - g.base_ms), &v)) {
        if (present) /* no reference to this block: forget an older one here */
            kill(s);
        return;
    }
    if (!present && (g.count + 1) * 10 > ((uint64_t)7 << mt_rb_h.bits)) {
        if (!grow_map())
            return; /* no room: the block's free will be written in full */
        s = find(addr);
    }
    if (!present && ++g.count > g.peak)
        g.peak = g.count;
    *s = v;
}

/* Whether slot s holds the block (trace, size, birth_ms), its birth
 * above base_ms. */
static bool holds(const slot *s, uint32_t trace, uint64_t size, uint64_t birth_ms, uint64_t base_ms)
{
    uint64_t v = s->val;
    return (v & LOW(TRACE_BITS)) == trace && v >> (TRACE_BITS + SERIAL_BITS) == size &&
           base_ms + (uint64_t)key_birth(s->key) == birth_ms;
}

static uint64_t serial_of(const slot *s)
{
    return s->val >> TRACE_BITS & LOW(SERIAL_BITS);
}

bool mt_rb_take(uint64_t addr, uint32_t trace, uint64_t size, uint64_t birth_ms, uint64_t *serial)
{
    slot *s = mt_rb_h.map && g.have_base && addr_fits(addr) ? find(addr) : NULL;
    if (!s || !s->key || dead(s)) {
        g.stats.not_found++;
        return false;
    }
    if (!holds(s, trace, size, birth_ms, g.base_ms)) {
        g.stats.mismatched++; /* another block lives at addr now: keep it */
        return false;
    }
    *serial = serial_of(s);
    kill(s);
    g.stats.refs++;
    return true;
}

bool mt_rb_take_prev(uint64_t addr, uint32_t trace, uint64_t size, uint64_t birth_ms,
                     uint32_t prev_count, uint64_t *serial)
{
    if (!mt_rb_h.pmap || !addr_fits(addr))
        return false;
    slot *s = find_in(mt_rb_h.pmap, mt_rb_h.pbits, addr);
    /* the count check is the trace states' and the map's agreement
     * (both of the frame before), kept in release builds: a reference
     * past it would be a corrupt file */
    if (!s->key || dead(s) || !holds(s, trace, size, birth_ms, g.pbase_ms) ||
        serial_of(s) >= prev_count)
        return false;
    *serial = serial_of(s);
    kill(s);
    g.stats.prev_refs++;
    return true;
}

/* The frame that ends becomes the frame before: its map, as it is (dead
 * entries and all: a look-up passes over them), is the previous frame's
 * map, and the old one of the frame before, emptied, the next frame's:
 * kept when it has the size the frame that ends wants (maybe_shrink's
 * rule), else replaced.  No entry is copied: copying the live entries
 * into a compact map cost a pass and a random store per live block at
 * every frame's end (docs/performance.md, "References into the frame
 * before"). */
static void swap_to_prev(void)
{
    if (!g.peak) { /* the frame stored nothing: its map is empty, no block to keep */
        drop_prev();
        return;
    }
    slot *old = mt_rb_h.pmap;
    unsigned old_bits = mt_rb_h.pbits, want = want_bits(g.peak);
    mt_rb_h.pmap = mt_rb_h.map;
    mt_rb_h.pbits = mt_rb_h.bits;
    g.pbase_ms = g.base_ms;
    if (old && old_bits == want) {
        memset(old, 0, map_bytes(old_bits));
    } else {
        mt_os_free(old, map_bytes(old_bits)); /* NULL: nothing */
        old = new_map(want);                  /* NULL: the next allocation maps one */
        old_bits = old ? want : 0;
    }
    mt_rb_h.map = old;
    mt_rb_h.bits = old_bits;
}

/* A new epoch, the current frame's counts at zero (its map is empty). */
static void empty_frame(void)
{
    g.count = g.peak = mt_rb_h.frame_allocs = 0;
    g.have_base = false;
    if (++mt_rb_h.epoch == 0) { /* wrapped: old trace states could look current */
        if (mt_rb_h.traces)
            memset(mt_rb_h.traces, 0, (size_t)mt_rb_h.ntraces * sizeof *mt_rb_h.traces);
        g.full_epoch = 0;
        mt_rb_h.epoch = 1;
        drop_prev(); /* the states' prev_count went with them */
    }
}

void mt_rb_new_frame(void)
{
    swap_to_prev();
    empty_frame();
}

void mt_rb_new_file(void)
{
    drop_prev();
    /* The map is emptied (no epoch in a slot: 16 bytes); a frame that
     * stored nothing left it empty. */
    if (!maybe_shrink() && mt_rb_h.map && g.peak)
        memset(mt_rb_h.map, 0, map_bytes(mt_rb_h.bits));
    empty_frame();
    empty_frame(); /* an epoch between: no trace state takes a count as prev_count */
}

const mt_rb_stats *mt_rb_get_stats(void)
{
    return &g.stats;
}

void mt_rb_reset_stats(void)
{
    memset(&g.stats, 0, sizeof g.stats);
}

uint64_t mt_rb_bytes(void)
{
    return (mt_rb_h.map ? map_bytes(mt_rb_h.bits) : 0) +
           (mt_rb_h.pmap ? map_bytes(mt_rb_h.pbits) : 0) +
           (uint64_t)mt_rb_h.ntraces * sizeof(mt_rb_trace);
}
