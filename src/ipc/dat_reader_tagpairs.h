/* dat_reader_tagpairs.h -- version 8's paired tags (dat_format.h,
 * "Version 8"; docs/recording-format.md, 13 EVENTS2): a TAG_PAIRS
 * record's table, checked, and an EVENTS2 record's tags column expanded
 * from its codes into the tags themselves.
 *
 * Why: both EVENTS2 decoders (dat_reader_events2.c one event at a time,
 * dat_reader_batch2.c in runs) and the look-ahead read the tags column
 * byte by byte, and version 7's runs of references read the byte before
 * a tag too.  Expanding a record's codes once, at its start, into a
 * buffer they read instead leaves them as they are: one tight loop per
 * record, and no version test per event.
 *
 * The table and the buffer are the reader's (320 KB, allocated at its
 * first TAG_PAIRS: a file without one never pays for them); a frame's
 * start clears `on` only, and a TAG_PAIRS the last one's pairs only (a
 * file of many TAG_PAIRS costs its pairs, not a table's size each). */
#ifndef MEMTOP_DAT_READER_TAGPAIRS_H
#define MEMTOP_DAT_READER_TAGPAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "shm_error.h"

/* code[c][x]: pair x of context c (first tag | second << 8), MT_DTP_NONE
 * where the table has none, MT_DTP_ESC at x = MT_DAT_TAG_ESCAPE: a code
 * is one look-up and one test.  npairs: the pairs set, per context (what
 * the next table clears first). */
#define MT_DTP_NONE 0x10000u
#define MT_DTP_ESC 0x20000u
/* The corrupt case's message where the codes do not fill the column. */
#define MT_DTP_BAD_LEN "tags column length"
typedef struct mt_dtp_table {
    uint32_t code[MT_DAT_TAG_CONTEXTS][MT_DAT_TAG_ESCAPE + 1];
    uint8_t npairs[MT_DAT_TAG_CONTEXTS];
    /* a record's tags, from tags[1]; tags[0] stays 0, the byte before
     * the first (never read for a valid tag: see mt_dref_of) */
    unsigned char tags[1 + MT_DAT_EVENTS_MAX];
} mt_dtp_table;

typedef struct mt_dtp {
    mt_dtp_table *t; /* NULL until the first TAG_PAIRS */
    bool on;         /* a TAG_PAIRS holds in this frame (t is set) */
} mt_dtp;

/* A zstd frame starts (or a seek lands on one): no table holds. */
static inline void mt_dtp_reset(mt_dtp *p)
{
    p->on = false;
}

/* A TAG_PAIRS payload [at, end) into p's table, which then holds (after
 * an error as well: with no pairs).  MT_OK; MT_E_NOMEM for the first
 * table; MT_E_CORRUPT for a bad one ("bad tag pairs"), *why set.  Bytes
 * after the table are ignored (fields a newer writer appends). */
mt_errc mt_dtp_read(mt_dtp *p, const unsigned char *at, const unsigned char *end, const char **why);

/* The n tags a record's tags column [at, end) gives while p's table
 * holds, into p->t->tags + 1.  NULL, or what is wrong: "tag code beyond
 * its table", "tags column length" (the codes end before the n tags do,
 * or bytes are left after them). */
const char *mt_dtp_expand(const mt_dtp *p, const unsigned char *at, const unsigned char *end,
                          size_t n);

#endif
