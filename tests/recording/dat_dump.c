/* dat_dump.c -- a small debug decoder of .dat recordings for the writer's
 * tests (tests/recording/test_writer_*.py).
 *
 * Why: the writer (src/preload/record_*.c) is tested against the format in
 * src/ipc/dat_format.h independently of the real reader.  It decompresses
 * the zstd frames one by one (a frame is only parsed once complete, so a
 * file cut short reads up to its last complete frame), walks every record,
 * replays the events per trace on top of the initial state, and prints
 * counts as "key value" lines.  With --traces it also prints one line per
 * trace: the replayed counters and the FINAL state's.
 *
 * With --sizes it prints where the bytes go: raw payload bytes per record
 * type, and per EVENTS2 column part its raw and zstd-compressed bytes (the
 * tags column as stored: version 8's codes when a table holds).
 *
 * Version 8: TAG_PAIRS checked and kept for the rest of its frame, the
 * tags decoded from their codes (tag_pairs, paired_records, tag_codes,
 * tag_escapes, odd_tags count what it saw).
 *
 * Usage: dat_dump [--traces | --sizes] FILE.dat   exit 0 ok, 1 corrupt, 2 usage/io
 */
#include "dat_format.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define MAX_TRACES (1u << 22)
#define MAX_TYPES 64

typedef struct {
    uint64_t
        v[7]; /* alloc_count, alloc_bytes, free_count, free_bytes, temp_count, temp_bytes, peak */
    uint64_t ev_allocs, ev_frees, culled; /* replay: events written, blocks culled */
} counters;

#define MAX_MODULES 4096

typedef struct {
    uint64_t bias, start, end;
    char path[512];
} module;

/* EVENTS2's frame context, per trace: its blocks of this frame by serial. */
typedef struct {
    uint64_t size, birth_ms;
    bool live;
} fblock;

typedef struct {
    uint64_t frame; /* the fields belong to this frame */
    fblock *b;
    uint64_t n, cap;
    fblock *pb; /* its blocks of the frame before (version 6: FREE_PREV) */
    uint64_t pn, pcap;
    uint64_t last_size;
    bool has_size;
    uint64_t next; /* next(trace) + 1 in this frame (version 4), 0: none */
} ftrace;

typedef struct {
    module mods[MAX_MODULES];
    uint64_t *frame0; /* per trace; UINT64_MAX: no frames */
    uint64_t records[MAX_TYPES];
    uint64_t allocs, frees, temps, reallocs, missed, alloc_bytes, free_bytes;
    uint64_t lost_alloc, lost_free, defs, modules, unloads, live_entries, live_blocks;
    uint64_t lost_why[MT_DAT_LOST_CAUSE_MAX + 1], lost_unsaid; /* LOST's causes; none given */
    uint64_t end_reason, end_error, end_events, end_dropped, totals_last_alloc_count,
        totals_nfields;
    uint64_t bad_trace_refs, max_tid_events, last_t, process_flags, process_pid;
    uint64_t record_mode, tick_order, cull_ms, culled_blocks, culled_bytes, written_early, young;
    uint64_t ref_frees, prev_frees, full_frees, next_traces, frame; /* EVENTS2 */
    uint64_t ref_runs, rising_sizes, same_trace_written;            /* version 7 */
    /* version 8: TAG_PAIRS records, EVENTS2 records coded by pairs (a
     * table held), their codes, escapes and odd last tags; the table
     * that holds in this frame (none at its start) */
    uint64_t tag_pairs, paired_records, tag_codes, tag_escapes, odd_tags;
    uint64_t escapes_listed; /* escaped though the table lists the pair (a wasted code) */
    bool has_table;
    uint8_t npairs[MT_DAT_TAG_CONTEXTS];
    uint16_t pairs[MT_DAT_TAG_CONTEXTS][MT_DAT_TAG_PAIRS_MAX];
    unsigned char *tags; /* a record's tags, decoded (MT_DAT_EVENTS_MAX) */
    uint32_t version;
    ftrace *ft;
    uint64_t ft_used; /* one past the highest trace frame_trace gave: dump_free frees below */
    bool has_end, has_final;
    counters *replay, *final;
    char exe[4096];
} dump;

typedef struct {
    const unsigned char *p, *end;
    bool bad;
} cur;

static uint64_t get_v(cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end) {
            c->bad = true;
            return 0;
        }
        unsigned char b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

static int64_t get_z(cur *c)
{
    uint64_t v = get_v(c);
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void get_s(cur *c, char *out, size_t cap)
{
    uint64_t n = get_v(c);
    if (n > (uint64_t)(c->end - c->p) || n > MT_DAT_STRING_MAX) {
        c->bad = true;
        return;
    }
    size_t k = n < cap - 1 ? (size_t)n : cap - 1;
    memcpy(out, c->p, k);
    out[k] = 0;
    c->p += n;
}

static bool trace_ok(dump *d, uint64_t id)
{
    if (id < d->defs)
        return true;
    d->bad_trace_refs++;
    return false;
}

static void count_event(dump *d, unsigned kind, unsigned flags, uint64_t trace, uint64_t size)
{
    bool ok = trace_ok(d, trace);
    if (kind == MT_DAT_EV_ALLOC) {
        d->allocs++;
        d->alloc_bytes += size;
        if (ok) {
            d->replay[trace].ev_allocs++;
            d->replay[trace].v[0]++;
            d->replay[trace].v[1] += size;
        }
        return;
    }
    d->frees++;
    d->free_bytes += size;
    d->temps += (flags & MT_DAT_EVF_TEMPORARY) != 0;
    d->reallocs += (flags & MT_DAT_EVF_REALLOC) != 0;
    d->missed += (flags & MT_DAT_EVF_MISSED) != 0;
    if (ok) {
        d->replay[trace].ev_frees++;
        d->replay[trace].v[2]++;
        d->replay[trace].v[3] += size;
        if (flags & MT_DAT_EVF_TEMPORARY) {
            d->replay[trace].v[4]++;
            d->replay[trace].v[5] += size;
        }
    }
}

static void events(dump *d, cur *c)
{
    get_v(c); /* tid */
    uint64_t t = get_v(c), n = get_v(c), trace = 0;
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        if (c->p >= c->end) {
            c->bad = true;
            return;
        }
        unsigned tag = *c->p++;
        if (!(tag & MT_DAT_EV_SAME_TIME))
            t += get_v(c);
        if (!(tag & MT_DAT_EV_SAME_TRACE))
            trace = get_v(c);
        uint64_t size = get_v(c);
        unsigned kind = tag & MT_DAT_EV_KIND_MASK;
        if (kind != MT_DAT_EV_ALLOC)
            get_v(c); /* age_ms */
        count_event(d, kind, (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7, trace, size);
    }
    d->last_t = t;
}

static ftrace *frame_trace(dump *d, uint64_t id)
{
    ftrace *t = &d->ft[id];
    if (id >= d->ft_used)
        d->ft_used = id + 1;
    if (t->frame != d->frame) {
        fblock *b = t->b; /* the frame before's blocks: this frame's if it was that one */
        uint64_t cap = t->cap;
        bool before = t->frame + 1 == d->frame;
        t->pn = before ? t->n : 0;
        t->b = t->pb;
        t->cap = t->pcap;
        t->pb = b;
        t->pcap = cap;
        t->frame = d->frame;
        t->n = 0;
        t->has_size = false;
        t->next = 0;
    }
    return t;
}

/* A varint of an EVENTS2 column: first byte from its lead part, the rest
 * from its tail part. */
static uint64_t get_sv(cur *col)
{
    cur *lead = &col[0], *tail = &col[1];
    if (lead->p >= lead->end) {
        lead->bad = true;
        return 0;
    }
    unsigned char b = *lead->p++;
    return (uint64_t)(b & 0x7f) | (b & 0x80 ? get_v(tail) << 7 : 0);
}

/* An EVENTS2 event's block: ALLOC appends it, FREE_REF takes back the
 * block ref names, FREE_PREV one of the frame before. */
static bool frame_block(ftrace *t, unsigned kind, uint64_t ref, uint64_t *size, uint64_t birth_ms)
{
    if (kind == MT_DAT_EV_FREE_PREV) {
        if (ref >= t->pn || !t->pb[t->pn - 1 - ref].live)
            return false;
        t->pb[t->pn - 1 - ref].live = false;
        *size = t->pb[t->pn - 1 - ref].size;
        return true;
    }
    if (kind == MT_DAT_EV_ALLOC) {
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 16;
            t->b = realloc(t->b, t->cap * sizeof *t->b);
        }
        t->b[t->n++] = (fblock){*size, birth_ms, true};
        return true;
    }
    if (ref >= t->n || !t->b[t->n - 1 - ref].live)
        return false;
    t->b[t->n - 1 - ref].live = false;
    *size = t->b[t->n - 1 - ref].size;
    return true;
}

/* --sizes: where the bytes go (issue 12).  Raw payload bytes per record
 * type; per EVENTS2 column part, its raw bytes and what zstd level 1 makes
 * of it alone (the writer compresses each part as zstd blocks of its own,
 * so the sum estimates the file's share of each). */
static bool g_sizes;
static uint64_t g_type_raw[MAX_TYPES], g_col_raw[11], g_col_z[11];
static const char *const g_col_name[11] = {"tags",        "times_lead", "times_tail", "traces_lead",
                                           "traces_tail", "sizes_lead", "sizes_tail", "refs_lead",
                                           "refs_tail",   "ages_lead",  "ages_tail"};

static void size_columns(const cur *col)
{
    static unsigned char z[1 << 20];
    for (int i = 0; i < 11; i++) {
        size_t n = (size_t)(col[i].end - col[i].p);
        g_col_raw[i] += n;
        if (n) {
            size_t k = ZSTD_compress(z, sizeof z, col[i].p, n, 1);
            g_col_z[i] += ZSTD_isError(k) ? n : k < n ? k : n;
        }
    }
}

static void print_sizes(void)
{
    for (unsigned t = 0; t < MAX_TYPES; t++)
        if (g_type_raw[t])
            printf("raw_type_%u %llu\n", t, (unsigned long long)g_type_raw[t]);
    for (int i = 0; i < 11; i++)
        printf("col_%s %llu raw %llu zstd1\n", g_col_name[i], (unsigned long long)g_col_raw[i],
               (unsigned long long)g_col_z[i]);
}

/* Version 8's TAG_PAIRS: the table for the EVENTS2 records after it in
 * this frame, checked as a reader must (dat_format.h). */
static void tag_pairs(dump *d, cur *c)
{
    uint64_t nctx = get_v(c);
    int prev = -1;
    d->tag_pairs++;
    d->has_table = false;
    memset(d->npairs, 0, sizeof d->npairs);
    if (nctx > MT_DAT_TAG_CONTEXTS) {
        c->bad = true;
        return;
    }
    for (uint64_t i = 0; i < nctx && !c->bad; i++) {
        uint64_t ctx = get_v(c), np = get_v(c);
        if (ctx > 255 || (int)ctx <= prev || np == 0 || np > MT_DAT_TAG_PAIRS_MAX) {
            c->bad = true;
            return;
        }
        prev = (int)ctx;
        d->npairs[ctx] = (uint8_t)np;
        for (uint64_t x = 0; x < np && !c->bad; x++) {
            uint64_t pair = get_v(c);
            if (pair > 0xffff)
                c->bad = true;
            d->pairs[ctx][x] = (uint16_t)pair;
        }
    }
    d->has_table = !c->bad; /* bytes after the last context: appended fields, ignored */
}

/* The record's n tags into d->tags from its tags column: as they are, or
 * (version 8, a table holds) from the codes.  False: corrupt. */
static bool decode_tags(dump *d, cur *col, uint64_t n)
{
    uint64_t len = (uint64_t)(col->end - col->p);
    if (!d->has_table) {
        if (len != n)
            return false;
        memcpy(d->tags, col->p, n);
        col->p += n;
        return true;
    }
    d->paired_records++;
    unsigned ctx = 0;
    uint64_t i = 0;
    for (; i + 1 < n; i += 2) {
        if (col->p >= col->end)
            return false;
        unsigned x = *col->p++;
        d->tag_codes++;
        if (x == MT_DAT_TAG_ESCAPE) {
            if (col->end - col->p < 2)
                return false;
            d->tags[i] = *col->p++;
            d->tags[i + 1] = *col->p++;
            d->tag_escapes++;
            unsigned pair = d->tags[i] | (unsigned)d->tags[i + 1] << 8;
            for (unsigned k = 0; k < d->npairs[ctx]; k++)
                d->escapes_listed += d->pairs[ctx][k] == pair;
        } else {
            if (x >= d->npairs[ctx])
                return false;
            d->tags[i] = (unsigned char)(d->pairs[ctx][x] & 0xff);
            d->tags[i + 1] = (unsigned char)(d->pairs[ctx][x] >> 8);
        }
        ctx = d->tags[i + 1];
    }
    if (i < n) {
        if (col->p >= col->end)
            return false;
        d->tags[i] = *col->p++;
        d->odd_tags++;
    }
    return col->p == col->end;
}

/* EVENTS2: tags, then times, traces, sizes, refs, ages (lead and tail). */
static void events2(dump *d, cur *c)
{
    get_v(c); /* tid */
    uint64_t t = get_v(c), n = get_v(c), trace = 0, len[11], col_trace = 0;
    bool prev_alloc = false, v7 = d->version >= MT_DAT_VERSION_RUNS;
    unsigned prev_kind = MT_DAT_EV_ALLOC; /* of the previous event in the record */
    uint64_t prev_ref = 0;
    len[0] = d->version >= MT_DAT_VERSION_PAIRS ? get_v(c) : n; /* version 8: tags_len */
    if (n > MT_DAT_EVENTS_MAX) {
        c->bad = true;
        return;
    }
    for (int i = 1; i < 11; i++)
        len[i] = get_v(c);
    cur col[12];
    for (int i = 0; i < 11 && !c->bad; i++) {
        if (len[i] > (uint64_t)(c->end - c->p)) {
            c->bad = true;
            return;
        }
        col[i] = (cur){c->p, c->p + len[i], false};
        c->p += len[i];
    }
    col[11] = (cur){c->p, c->p, false};
    if (g_sizes)
        size_columns(col);
    if (!c->bad && !decode_tags(d, &col[0], n))
        c->bad = true;
    cur *times = &col[1], *traces = &col[3], *sizes = &col[5], *refs = &col[7], *ages = &col[9];
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        unsigned tag = d->tags[i], kind = tag & MT_DAT_EV_KIND_MASK;
        unsigned flags = kind == MT_DAT_EV_ALLOC ? 0 : (tag >> MT_DAT_EV_FLAGS_SHIFT) & 7;
        if (!(tag & MT_DAT_EV_SAME_TIME))
            t += get_sv(times);
        uint64_t prev = trace;
        bool next = kind == MT_DAT_EV_ALLOC && (tag & MT_DAT_EV_NEXT_TRACE);
        if (next && (!prev_alloc || !frame_trace(d, prev)->next))
            c->bad = true;
        else if (next)
            trace = frame_trace(d, prev)->next - 1;
        else if (!(tag & MT_DAT_EV_SAME_TRACE)) {
            uint64_t v = get_sv(traces); /* tick order: a zigzag step from the last one */
            trace = col_trace = d->tick_order == 1 ? col_trace + ((v >> 1) ^ -(v & 1)) : v;
            /* written though SAME_TRACE could say it (version 7: a value that does not rise) */
            d->same_trace_written += i > 0 && trace == prev && (tag & MT_DAT_EV_SAME_TIME);
        }
        bool ref = kind >= MT_DAT_EV_FREE_REF;
        if ((kind == MT_DAT_EV_FREE_PREV && d->version < MT_DAT_VERSION_PREV) ||
            !trace_ok(d, trace) || c->bad) {
            c->bad = true;
            return;
        }
        if (kind == MT_DAT_EV_ALLOC && prev_alloc && trace != prev)
            frame_trace(d, prev)->next = trace + 1;
        prev_alloc = kind == MT_DAT_EV_ALLOC;
        ftrace *ft = frame_trace(d, trace);
        uint64_t size = ft->last_size;
        /* version 7: a value after its like, in a run of one trace */
        bool run = v7 && i > 0 && (tag & MT_DAT_EV_SAME_TIME) && (tag & MT_DAT_EV_SAME_TRACE);
        if (ref && (tag & MT_DAT_EV_SAME_SIZE)) /* bit 7 on a reference: every version */
            c->bad = true;
        else if (!ref && !(tag & MT_DAT_EV_SAME_SIZE)) {
            size = get_sv(sizes);
            if (run && kind == MT_DAT_EV_ALLOC && ft->has_size) {
                if (size >= UINT64_MAX - ft->last_size)
                    c->bad = true;
                size += ft->last_size + 1;
                d->rising_sizes++;
            }
        } else if (!ref && !ft->has_size)
            c->bad = true;
        if (kind == MT_DAT_EV_FREE)
            get_sv(ages); /* age_ms */
        uint64_t r = ref ? get_sv(refs) : 0;
        if (ref && run && prev_kind == kind) {
            if (r >= UINT64_MAX - prev_ref)
                c->bad = true;
            r += prev_ref + 1;
            d->ref_runs++;
        }
        if (kind != MT_DAT_EV_FREE && !c->bad && !frame_block(ft, kind, r, &size, t / 1000000u))
            c->bad = true;
        prev_kind = kind;
        prev_ref = r;
        d->ref_frees += kind == MT_DAT_EV_FREE_REF;
        d->prev_frees += kind == MT_DAT_EV_FREE_PREV;
        d->next_traces += next;
        d->full_frees += kind == MT_DAT_EV_FREE;
        if (kind != MT_DAT_EV_FREE_PREV) { /* it leaves the last size */
            ft->last_size = size;
            ft->has_size = true;
        }
        count_event(d, kind == MT_DAT_EV_ALLOC ? MT_DAT_EV_ALLOC : MT_DAT_EV_FREE, flags, trace,
                    size);
    }
    for (int i = 0; i < 11; i++)
        if (col[i].bad || col[i].p != col[i].end)
            c->bad = true;
    d->last_t = t;
}

static void trace_states(dump *d, cur *c, bool final)
{
    uint64_t n = get_v(c), id = 0;
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        id += get_v(c);
        counters k = {0};
        for (int j = 0; j < 7; j++)
            k.v[j] = get_v(c);
        if (!trace_ok(d, id))
            continue;
        if (final)
            d->final[id] = k;
        else
            d->replay[id] = k;
    }
}

/* CULLED: blocks allocated and freed within the threshold, per trace. */
static void culled(dump *d, cur *c)
{
    get_v(c); /* now */
    d->written_early = get_v(c);
    d->young = get_v(c);
    uint64_t n = get_v(c), id = 0;
    for (uint64_t i = 0; i < n && !c->bad; i++) {
        id += get_v(c);
        uint64_t k[4];
        for (int j = 0; j < 4; j++)
            k[j] = get_v(c);
        d->culled_blocks += k[0];
        d->culled_bytes += k[1];
        if (!trace_ok(d, id))
            continue;
        counters *r = &d->replay[id];
        r->culled += k[0];
        r->v[0] += k[0];
        r->v[1] += k[1];
        r->v[2] += k[0];
        r->v[3] += k[1];
        r->v[4] += k[2];
        r->v[5] += k[3];
    }
}

static void record(dump *d, unsigned type, cur *c, unsigned *state_kind)
{
    if (type < MAX_TYPES)
        d->records[type]++;
    switch (type) {
    case MT_DAT_REC_PROCESS: {
        d->process_pid = get_v(c);
        for (int i = 0; i < 9; i++)
            get_v(c);
        d->process_flags = get_v(c);
        get_s(c, d->exe, sizeof d->exe);
        char cmdline[64];
        get_s(c, cmdline, sizeof cmdline);
        if (c->p < c->end) { /* versions 3 to 5: the mode */
            d->record_mode = get_v(c);
            d->cull_ms = get_v(c);
            get_v(c); /* young_max */
            get_v(c); /* sample_rate_bytes */
        }
        if (c->p < c->end) /* version 5: the order */
            d->tick_order = get_v(c);
        break;
    }
    case MT_DAT_REC_CULLED:
        culled(d, c);
        break;
    case MT_DAT_REC_MODULE: {
        uint64_t idx = get_v(c);
        get_v(c);
        module m;
        m.bias = get_v(c);
        m.start = get_v(c);
        m.end = get_v(c);
        char bid[64];
        get_s(c, bid, sizeof bid);
        get_s(c, m.path, sizeof m.path);
        if (idx != d->modules)
            c->bad = true;
        else if (idx < MAX_MODULES)
            d->mods[idx] = m;
        d->modules++;
        break;
    }
    case MT_DAT_REC_MODULE_UNLOAD:
        d->unloads++;
        break;
    case MT_DAT_REC_TRACE: {
        uint64_t id = get_v(c);
        if (id != d->defs || id >= MAX_TRACES)
            c->bad = true;
        get_v(c);
        get_v(c);
        get_v(c);
        uint64_t n = get_v(c);
        if (!c->bad)
            d->frame0[id] = n ? get_v(c) : UINT64_MAX;
        d->defs++;
        break;
    }
    case MT_DAT_REC_EVENTS:
        events(d, c);
        break;
    case MT_DAT_REC_EVENTS2:
        events2(d, c);
        break;
    case MT_DAT_REC_TAG_PAIRS:
        if (d->version >= MT_DAT_VERSION_PAIRS)
            tag_pairs(d, c);
        break; /* earlier versions: unknown, skipped */
    case MT_DAT_REC_TOTALS: {
        get_v(c);
        get_v(c);
        d->totals_nfields = get_v(c);
        for (int i = 0; i < 3; i++)
            d->totals_last_alloc_count = get_v(c);
        break;
    }
    case MT_DAT_REC_STATE_BEGIN:
        *state_kind = (unsigned)get_v(c);
        break;
    case MT_DAT_REC_TRACE_STATES:
        trace_states(d, c, *state_kind == MT_DAT_STATE_FINAL);
        break;
    case MT_DAT_REC_LIVE_BLOCKS: {
        uint64_t n = get_v(c);
        for (uint64_t i = 0; i < n && !c->bad; i++) {
            get_z(c);
            get_z(c);
            get_v(c);
            d->live_blocks += get_v(c);
        }
        d->live_entries += n;
        break;
    }
    case MT_DAT_REC_STATE_END:
        if (get_v(c) == MT_DAT_STATE_FINAL)
            d->has_final = true;
        break;
    case MT_DAT_REC_LOST: {
        get_v(c);
        get_v(c);
        uint64_t ac = get_v(c);
        get_v(c);
        uint64_t fc = get_v(c);
        get_v(c);
        d->lost_alloc += ac;
        d->lost_free += fc;
        if (c->p == c->end) { /* an older writer: no causes */
            d->lost_unsaid += ac + fc;
            break;
        }
        uint64_t n = get_v(c);
        for (uint64_t i = 0; i < n && !c->bad; i++) {
            uint64_t cause = get_v(c), count = get_v(c);
            if (cause > MT_DAT_LOST_CAUSE_MAX) { /* corrupt: said so, never counted as cause 0 */
                c->bad = true;
                break;
            }
            d->lost_why[cause] += count;
        }
        break;
    }
    case MT_DAT_REC_END:
        get_v(c);
        get_v(c);
        d->end_reason = get_v(c);
        d->end_error = get_v(c);
        d->end_events = get_v(c);
        d->end_dropped = get_v(c);
        d->has_end = true;
        break;
    default:
        break; /* unknown: skipped */
    }
}

/* Walks the records of one complete frame. */
static bool walk(dump *d, const unsigned char *p, size_t n)
{
    static unsigned state_kind;
    cur c = {p, p + n, false};
    d->frame++;           /* EVENTS2 references reach this frame and the one before */
    d->has_table = false; /* version 8: a frame starts with no TAG_PAIRS */
    while (c.p < c.end && !c.bad) {
        unsigned type = (unsigned)get_v(&c);
        uint64_t len = get_v(&c);
        if (c.bad || len > (uint64_t)(c.end - c.p) || len > MT_DAT_RECORD_MAX)
            return false;
        cur r = {c.p, c.p + len, false};
        if (type < MAX_TYPES)
            g_type_raw[type] += len;
        record(d, type, &r, &state_kind);
        if (r.bad) {
            fprintf(stderr, "dat_dump: frame %llu: record type %u corrupt\n",
                    (unsigned long long)d->frame, type);
            return false;
        }
        c.p += len;
    }
    return !c.bad;
}

static int fail(const char *msg)
{
    fprintf(stderr, "dat_dump: %s\n", msg);
    return 1;
}

/* The whole file, in memory (NULL: cannot read it; said on stderr). */
static unsigned char *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return perror(path), NULL;
    unsigned char *file = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
        file = malloc((size_t)n + 1);
    if (file && fread(file, 1, (size_t)n, f) != (size_t)n) {
        free(file);
        file = NULL;
    }
    if (!file)
        perror("read");
    fclose(f);
    *size = (size_t)n;
    return file;
}

static dump *dump_new(void)
{
    dump *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->replay = calloc(MAX_TRACES, sizeof(counters));
    d->final = calloc(MAX_TRACES, sizeof(counters));
    d->frame0 = calloc(MAX_TRACES, sizeof(uint64_t));
    d->ft = calloc(MAX_TRACES, sizeof(ftrace));
    d->tags = malloc(MT_DAT_EVENTS_MAX);
    return d;
}

/* Everything dump_new and the decoding allocated (a sanitizer's leak check
 * runs at exit).  Only the traces frame_trace gave have arrays: reading all
 * MAX_TRACES would fault in the 300 MB table, 0.1 s of each run. */
static void dump_free(dump *d)
{
    if (!d)
        return;
    for (uint64_t i = 0; d->ft && i < d->ft_used; i++) {
        free(d->ft[i].b);
        free(d->ft[i].pb);
    }
    free(d->ft);
    free(d->tags);
    free(d->frame0);
    free(d->final);
    free(d->replay);
    free(d);
}

/* Decodes the frames after the header: 0, or 1 (corrupt: said on stderr).
 * *frames: complete frames; *tail: bytes after the last one. */
static int decode(dump *d, const unsigned char *p, size_t n, uint64_t *frames, uint64_t *tail)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    size_t cap = 1 << 20, len = 0;
    unsigned char *frame = malloc(cap);
    ZSTD_inBuffer in = {p, n, 0};
    uint64_t good_end = 0;
    bool mid = false;
    int rc = ds && frame ? 0 : fail("out of memory");
    *frames = 0;
    while (rc == 0 && in.pos < in.size) {
        if (len + ZSTD_DStreamOutSize() > cap) {
            unsigned char *grown = realloc(frame, cap * 2);
            if (!grown) {
                rc = fail("out of memory");
                break;
            }
            frame = grown;
            cap *= 2;
        }
        ZSTD_outBuffer out = {frame + len, cap - len, 0};
        size_t r = ZSTD_decompressStream(ds, &out, &in);
        if (ZSTD_isError(r)) {
            if (!mid && in.pos == 0) {
                rc = fail("corrupt: not a zstd frame");
                break;
            }
            fprintf(stderr, "dat_dump: corrupt frame %llu: %s\n", (unsigned long long)*frames,
                    ZSTD_getErrorName(r));
            rc = 1;
            break;
        }
        len += out.pos;
        mid = true;
        if (r == 0) {
            if (!walk(d, frame, len)) {
                rc = fail("corrupt record");
                break;
            }
            ++*frames;
            len = 0;
            mid = false;
            good_end = in.pos;
        } else if (out.pos == 0 && in.pos == in.size) {
            break;
        }
    }
    *tail = in.size - good_end;
    free(frame);
    ZSTD_freeDStream(ds);
    return rc;
}

static void print_counts(const dump *d, unsigned version, uint64_t frames, uint64_t tail)
{
    printf("version %u\nframes %llu\ntruncated %d\ntail_bytes %llu\n", version,
           (unsigned long long)frames, tail != 0, (unsigned long long)tail);
    printf("finalized %d\nend_reason %llu\nend_error %llu\nhas_final %d\n", d->has_end,
           (unsigned long long)d->end_reason, (unsigned long long)d->end_error, d->has_final);
    printf("pid %llu\nprocess_flags %llu\nexe %s\n", (unsigned long long)d->process_pid,
           (unsigned long long)d->process_flags, d->exe);
    for (unsigned t = 0; t < MAX_TYPES; t++)
        if (d->records[t])
            printf("records_%u %llu\n", t, (unsigned long long)d->records[t]);
#define P(k) printf(#k " %llu\n", (unsigned long long)d->k)
    P(defs);
    P(modules);
    P(unloads);
    P(allocs);
    P(frees);
    P(ref_frees);
    P(prev_frees);
    P(next_traces);
    P(ref_runs);
    P(rising_sizes);
    P(same_trace_written);
    P(tag_pairs);
    P(paired_records);
    P(tag_codes);
    P(tag_escapes);
    P(odd_tags);
    P(escapes_listed);
    P(full_frees);
    P(temps);
    P(reallocs);
    P(missed);
    P(alloc_bytes);
    P(free_bytes);
    P(lost_alloc);
    P(lost_free);
    for (unsigned i = 0; i <= MT_DAT_LOST_CAUSE_MAX; i++)
        if (d->lost_why[i])
            printf("lost_why_%u %llu\n", i, (unsigned long long)d->lost_why[i]);
    P(lost_unsaid);
    P(live_entries);
    P(live_blocks);
    P(end_events);
    P(end_dropped);
    P(totals_nfields);
    P(bad_trace_refs);
    P(record_mode);
    P(tick_order);
    P(cull_ms);
    P(culled_blocks);
    P(culled_bytes);
    P(written_early);
    P(young);
#undef P
}

static void print_traces(const dump *d)
{
    for (uint64_t i = 0; i < d->defs; i++) {
        const counters *r = &d->replay[i], *fi = &d->final[i];
        const char *mod = "-";
        uint64_t off = d->frame0[i];
        for (uint64_t m = 0; off != UINT64_MAX && m < d->modules && m < MAX_MODULES; m++) {
            if (d->frame0[i] >= d->mods[m].start && d->frame0[i] < d->mods[m].end) {
                mod = d->mods[m].path;
                off = d->frame0[i] - d->mods[m].bias;
                break;
            }
        }
        printf("trace %llu at %s 0x%llx replay %llu %llu %llu %llu %llu %llu final %llu %llu "
               "%llu %llu "
               "%llu %llu events %llu %llu culled %llu\n",
               (unsigned long long)i, mod, (unsigned long long)off, (unsigned long long)r->v[0],
               (unsigned long long)r->v[1], (unsigned long long)r->v[2],
               (unsigned long long)r->v[3], (unsigned long long)r->v[4],
               (unsigned long long)r->v[5], (unsigned long long)fi->v[0],
               (unsigned long long)fi->v[1], (unsigned long long)fi->v[2],
               (unsigned long long)fi->v[3], (unsigned long long)fi->v[4],
               (unsigned long long)fi->v[5], (unsigned long long)r->ev_allocs,
               (unsigned long long)r->ev_frees, (unsigned long long)r->culled);
    }
}

/* The file's header checked: 0, else 1 (said on stderr). */
static int check_header(const unsigned char *file, size_t size, mt_dat_file_header *h)
{
    if (size < sizeof *h)
        return fail("not a memtop recording (too short)");
    memcpy(h, file, sizeof *h);
    if (memcmp(h->magic, MT_DAT_MAGIC, MT_DAT_MAGIC_BYTES) != 0)
        return fail("not a memtop recording");
    if (h->version < MT_DAT_VERSION_MIN || h->version > MT_DAT_VERSION ||
        h->header_bytes != MT_DAT_HEADER_BYTES)
        return fail("foreign version");
    return 0;
}

int main(int argc, char **argv)
{
    bool traces = argc == 3 && strcmp(argv[1], "--traces") == 0;
    g_sizes = argc == 3 && strcmp(argv[1], "--sizes") == 0;
    if (argc < 2 || (argc == 3 && !traces && !g_sizes))
        return fprintf(stderr, "usage: dat_dump [--traces | --sizes] FILE.dat\n"), 2;
    size_t size;
    unsigned char *file = read_whole(argv[argc - 1], &size);
    if (!file)
        return 2;
    mt_dat_file_header h;
    int rc = check_header(file, size, &h);
    dump *d = rc ? NULL : dump_new();
    if (!rc && (!d || !d->replay || !d->final || !d->frame0 || !d->ft || !d->tags))
        rc = fail("out of memory");
    uint64_t frames, tail;
    if (!rc) {
        d->version = h.version;
        rc = decode(d, file + h.header_bytes, size - h.header_bytes, &frames, &tail);
    }
    if (!rc) {
        print_counts(d, h.version, frames, tail);
        if (g_sizes)
            print_sizes();
        if (traces)
            print_traces(d);
        rc = d->bad_trace_refs ? 1 : 0;
    }
    dump_free(d);
    free(file);
    return rc;
}
