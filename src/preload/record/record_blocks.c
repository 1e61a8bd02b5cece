/* record_blocks.c -- the writer's EVENTS2 frame context (see .h): an
 * open-addressing map address -> block (linear probing, backward-shift
 * deletion) whose slots belong to an epoch, the current frame's number; a
 * slot of another epoch is empty, so a new frame empties the map without
 * touching it.  Per-trace state is reset the same way.
 */
#include "record_blocks.h"

#include "dat_format.h"
#include "core_os_memory.h"
#include "table_trace.h"

#include <string.h>

#define MAP_MIN_BITS 14u /* 16 Ki slots, 512 KiB */
#define MAP_MAX_BITS 30u
#define TRACES_MIN 1024u

typedef struct slot {
    uint64_t addr;
    uint64_t size;
    uint32_t trace;
    uint32_t epoch;     /* empty unless == g.epoch */
    uint32_t serial;    /* the block's number among its trace's allocations */
    int32_t birth_diff; /* birth_ms - g.base_ms */
} slot;

static struct {
    uint32_t epoch;
    slot *map;
    unsigned bits;
    uint64_t count, peak;  /* entries of this epoch; most this epoch */
    uint64_t frame_allocs; /* allocation events written in this epoch */
    bool have_base;
    uint64_t base_ms;
    mt_rb_trace *traces;
    uint32_t ntraces;    /* capacity */
    uint32_t full_epoch; /* the array could not grow in this epoch */
    mt_rb_stats stats;
} g;

static size_t map_bytes(unsigned bits)
{
    return ((size_t)1 << bits) * sizeof(slot);
}

static uint64_t home(uint64_t addr, unsigned bits)
{
    return (addr * 0x9e3779b97f4a7c15ull) >> (64u - bits);
}

/* A table of 2^bits empty slots instead of the current one, which holds
 * nothing (a new epoch) or whose entries the caller moves. */
static slot *new_map(unsigned bits)
{
    return mt_os_alloc(map_bytes(bits));
}

/* Shrinks the map at a frame boundary when the frame that ended used
 * little of it (the map is empty now: nothing to move). */
static void maybe_shrink(void)
{
    unsigned want = MAP_MIN_BITS;
    while (want < g.bits && ((uint64_t)1 << want) * 7 / 10 < g.peak * 2)
        want++;
    if (!g.map || want >= g.bits)
        return;
    slot *m = new_map(want);
    if (!m)
        return;
    mt_os_free(g.map, map_bytes(g.bits));
    g.map = m;
    g.bits = want;
}

void mt_rb_new_frame(void)
{
    maybe_shrink();
    g.count = g.peak = g.frame_allocs = 0;
    g.have_base = false;
    if (++g.epoch == 0) { /* wrapped: old slots could look current */
        if (g.map)
            memset(g.map, 0, map_bytes(g.bits));
        if (g.traces)
            memset(g.traces, 0, (size_t)g.ntraces * sizeof *g.traces);
        g.full_epoch = 0;
        g.epoch = 1;
    }
}

void mt_rb_child_reset(void)
{
    memset(&g, 0, sizeof g);
}

bool mt_rb_count_alloc(void)
{
    if (g.frame_allocs >= MT_DAT_FRAME_ALLOCS_MAX)
        return false;
    g.frame_allocs++;
    return true;
}

static bool grow_traces(uint32_t trace)
{
    uint32_t cap = g.ntraces ? g.ntraces : TRACES_MIN;
    while (cap <= trace && cap < MT_TRACE_MAX)
        cap *= 2;
    if (cap <= trace)
        return false;
    mt_rb_trace *t = mt_os_alloc((size_t)cap * sizeof *t);
    if (!t)
        return false;
    if (g.traces) {
        memcpy(t, g.traces, (size_t)g.ntraces * sizeof *t);
        mt_os_free(g.traces, (size_t)g.ntraces * sizeof *t);
    }
    g.traces = t;
    g.ntraces = cap;
    return true;
}

mt_rb_trace *mt_rb_trace_get(uint32_t trace)
{
    /* After a failed growth, traces beyond the array stay without state
     * for the rest of the frame: a state created later in the frame would
     * not have counted the trace's earlier allocations. */
    if (trace >= g.ntraces && (g.full_epoch == g.epoch || !grow_traces(trace))) {
        g.full_epoch = g.epoch;
        return NULL;
    }
    mt_rb_trace *t = &g.traces[trace];
    if (t->epoch != g.epoch)
        *t = (mt_rb_trace){.epoch = g.epoch};
    return t;
}

/* The slot holding addr, or the empty slot where it would go. */
static slot *find(uint64_t addr)
{
    uint64_t mask = ((uint64_t)1 << g.bits) - 1;
    for (uint64_t i = home(addr, g.bits);; i = (i + 1) & mask) {
        slot *s = &g.map[i];
        if (s->epoch != g.epoch || s->addr == addr)
            return s;
    }
}

static void remove_at(slot *hole)
{
    uint64_t mask = ((uint64_t)1 << g.bits) - 1;
    uint64_t i = (uint64_t)(hole - g.map);
    for (uint64_t j = (i + 1) & mask; g.map[j].epoch == g.epoch; j = (j + 1) & mask) {
        uint64_t k = home(g.map[j].addr, g.bits);
        /* The entry at j may move to i unless its home lies in (i, j]. */
        bool stays = i <= j ? (k > i && k <= j) : (k > i || k <= j);
        if (stays)
            continue;
        g.map[i] = g.map[j];
        i = j;
    }
    g.map[i].epoch = g.epoch - 1; /* != epoch: empty */
    g.count--;
}

/* Doubles the map, moving this epoch's entries; false if impossible. */
static bool grow_map(void)
{
    unsigned bits = g.map ? g.bits + 1 : MAP_MIN_BITS;
    if (bits > MAP_MAX_BITS)
        return false;
    slot *m = new_map(bits), *old = g.map;
    if (!m)
        return false;
    unsigned old_bits = g.bits;
    g.map = m;
    g.bits = bits;
    for (uint64_t i = 0; old && i < ((uint64_t)1 << old_bits); i++)
        if (old[i].epoch == g.epoch)
            *find(old[i].addr) = old[i];
    if (old)
        mt_os_free(old, map_bytes(old_bits));
    return true;
}

void mt_rb_note_alloc(uint64_t addr, uint32_t trace, uint64_t serial, uint64_t size,
                      uint64_t birth_ms)
{
    if (!g.have_base) {
        g.base_ms = birth_ms;
        g.have_base = true;
    }
    int64_t diff = (int64_t)(birth_ms - g.base_ms);
    bool fits = serial <= UINT32_MAX && diff >= INT32_MIN && diff <= INT32_MAX;
    if (!g.map && !grow_map())
        return;
    slot *s = find(addr);
    bool present = s->epoch == g.epoch;
    if (!fits) { /* no reference to this block: forget an older one here */
        if (present)
            remove_at(s);
        return;
    }
    if (!present && (g.count + 1) * 10 > ((uint64_t)7 << g.bits)) {
        if (!grow_map())
            return; /* no room: the block's free will be written in full */
        s = find(addr);
    }
    if (!present && ++g.count > g.peak)
        g.peak = g.count;
    *s = (slot){addr, size, trace, g.epoch, (uint32_t)serial, (int32_t)diff};
}

bool mt_rb_take(uint64_t addr, uint32_t trace, uint64_t size, uint64_t birth_ms, uint64_t *serial)
{
    slot *s = g.map && g.have_base ? find(addr) : NULL;
    if (!s || s->epoch != g.epoch) {
        g.stats.not_found++;
        return false;
    }
    if (s->trace != trace || s->size != size ||
        (uint64_t)((int64_t)g.base_ms + s->birth_diff) != birth_ms) {
        g.stats.mismatched++; /* another block lives at addr now: keep it */
        return false;
    }
    *serial = s->serial;
    remove_at(s);
    g.stats.refs++;
    return true;
}

void mt_rb_prefetch(uint64_t addr)
{
    if (g.map)
        __builtin_prefetch(&g.map[home(addr, g.bits)]);
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
    return (g.map ? map_bytes(g.bits) : 0) + (uint64_t)g.ntraces * sizeof(mt_rb_trace);
}
