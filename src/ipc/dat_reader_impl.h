/* dat_reader_impl.h -- the inside of an mt_dat_reader, shared by
 * dat_reader.c (file, frames, record framing), dat_reader_records.c
 * (decoding each record type) and the decoders of records' items
 * (dat_reader_items.c, _events2.c, _batch2.c, _tagpairs.c).  Nothing
 * outside the reader includes it. */
#ifndef MEMTOP_DAT_READER_IMPL_H
#define MEMTOP_DAT_READER_IMPL_H

#include <stddef.h>

#include "dat_reader.h"
#include "dat_reader_blocks.h"
#include "dat_reader_tagpairs.h"
#include "dat_zframes.h"

/* A bounded cursor over one record's payload. */
typedef struct mt_dcur {
    const unsigned char *p, *end;
} mt_dcur;

/* The columns of an EVENTS2 record, in file order. */
enum {
    MT_DCOL_TAGS,
    MT_DCOL_TIMES,
    MT_DCOL_TRACES,
    MT_DCOL_SIZES,
    MT_DCOL_REFS,
    MT_DCOL_AGES,
    MT_DCOL_N
};

/* The record being decoded, for records that give several events. */
typedef struct mt_drec {
    uint64_t type;
    mt_dcur c;
    uint64_t left; /* items still to give */
    uint64_t index;
    /* EVENTS, EVENTS2 */
    uint32_t tid;
    uint64_t t;
    uint32_t trace;
    bool have_trace;
    bool prev_alloc;    /* EVENTS2: the previous event is an ALLOC (of `trace`) */
    uint32_t col_trace; /* EVENTS2 in tick order: the trace the column gave last */
    /* EVENTS2: the tags ([MT_DCOL_TAGS][0]); the lead [c][0] and tail
     * [c][1] parts of each varint column */
    mt_dcur col[MT_DCOL_N][2];
    /* EVENTS2's look-ahead (dat_reader_events2.c): the tags, traces and
     * refs columns read MT_DAHEAD events ahead, unvalidated, only to
     * prefetch the block a coming free names */
    mt_dcur ahead[3][2];
    uint32_t ahead_trace, ahead_col; /* ahead_col: as col_trace */
    bool ahead_on;
    /* EVENTS2, version 7's runs of references: the last reference's ref
     * (a run's previous event is the tags column's byte before); the
     * look-ahead's, and its previous event's kind */
    unsigned ahead_key;
    uint64_t prev_ref, ahead_ref;
    /* CULLED: the record's figures */
    uint64_t early, young;
    /* TRACE_STATES, LIVE_BLOCKS, CULLED */
    uint64_t prev_id;
    int64_t prev_trace, prev_birth;
} mt_drec;

/* An ALLOCATORS record's list and its time (mt_dat_allocators_at). */
typedef struct mt_dat_alloc_list {
    uint64_t t;
    mt_shm_allocators a;
} mt_dat_alloc_list;
#define MT_DAT_ALLOC_LISTS 32 /* 140 KB at most; a target's list changes a few times */

struct mt_dat_reader {
    int fd;
    char label[512];
    mt_dat_info info;
    mt_zstream z;
    unsigned char *buf; /* decompressed bytes [pos, len) not consumed yet */
    size_t cap, pos, len;
    bool frame_done; /* buf ends where a frame ended */
    /* where the frame read last began (MT_DAT_NO_FRAME: none read since
     * the open or a seek without the frame before), where the next one
     * begins, and whether no byte of that one was read yet: mt_dat_tell's
     * frame before */
    uint64_t frame_start, next_start;
    bool at_boundary;
    bool rebuilding; /* a seek decodes the frame before its target (mt_dat_seek) */
    bool in_rec;     /* rec has items left */
    mt_drec rec;
    uint64_t records; /* records read */
    uint64_t skipped; /* of unknown types */
    /* the last ALLOCATORS record read (mt_dat_allocators); 4.3 KB, kept
     * here and not in the event, which the first pass copies per item */
    bool have_allocs;
    mt_shm_allocators allocs;
    /* the lists by time (mt_dat_allocators_at): each record's whose time
     * is past the newest kept (a record read again after a seek is not),
     * at most MT_DAT_ALLOC_LISTS (beyond, the newest replaces the last
     * kept: the list at the end stays right); allocated at the first */
    mt_dat_alloc_list *alloc_lists;
    size_t nalloc_lists;
    bool have_process;
    bool culled;     /* the PROCESS record says culled: CULLED records may come */
    bool tick_order; /* the PROCESS record says tick order: EVENTS2 traces are steps */
    uint64_t ndefs, nmodules;
    uint64_t t_last;
    uint64_t lost_events; /* the LOST records' events so far: their sum must fit (dec_lost) */
    mt_dctx ctx;          /* EVENTS2's frame context */
    mt_dtp tp;            /* version 8: the frame's TAG_PAIRS table, if one holds */
    /* mt_dat_defer_blocks: where the frame's live blocks go; defer_on
     * while this frame's events are deferred; the frame's allocations at
     * the last mt_dat_flush_blocks (none since: nothing to give) */
    mt_dat_block_fn defer_fn;
    void *defer_ctx;
    bool defer_on;
    uint64_t given_allocs;
    /* the open state set */
    bool in_set;
    uint32_t set_kind;
    uint64_t set_ntraces, set_nlive;
};

/* Decode the record of `type` whose payload is c into *ev (or start giving
 * its items).  MT_OK with an event, MT_E_EMPTY if the record gave none (or
 * is skipped), else an error. */
mt_errc mt_dat_decode(mt_dat_reader *r, uint64_t type, mt_dcur c, mt_dat_event *ev, mt_err *err);

/* The next item of the record in progress (r->in_rec). */
mt_errc mt_dat_decode_item(mt_dat_reader *r, mt_dat_event *ev, mt_err *err);

/* EVENTS2 (dat_reader_events2.c): cut the columns after the record's
 * header (d->left already read); the next event. */
mt_errc mt_dat_start_events2(mt_dat_reader *r, mt_drec *d, mt_err *err);
mt_errc mt_dat_next_event2(mt_dat_reader *r, mt_drec *d, mt_dat_hev *h, mt_err *err);

/* Varints: false if the payload ends first or the varint is longer than
 * 10 bytes (or overflows 64 bits). */
static inline bool mt_dcur_v(mt_dcur *c, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end)
            return false;
        unsigned char b = *c->p++;
        if (shift == 63 && (b & 0xfe))
            return false;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static inline bool mt_dcur_z(mt_dcur *c, int64_t *out)
{
    uint64_t u;
    if (!mt_dcur_v(c, &u))
        return false;
    *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return true;
}

#endif
