/* test_reader_script.h -- EVENTS2 files written from scripts, and read
 * every way the reader offers, for the reader's unit tests of versions 7
 * and 8 (test_reader_v7.c, test_reader_v8.c): one event at a time, in
 * runs (mt_dat_next_batch), and from each frame after a seek.
 *
 * Why: a decoder change must give the same events, and the same first
 * error, in both EVENTS2 decoders (dat_reader_events2.c,
 * dat_reader_batch2.c) and after a seek (the frame before decoded
 * first); the two test files check each case all these ways with the
 * same code. */
#ifndef MEMTOP_TEST_READER_SCRIPT_H
#define MEMTOP_TEST_READER_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "dat_reader.h"
#include "test_reader_builder.h"

#define MS 1000000ull

/* A script: each step an event (tag, trace, value: an ALLOC's size
 * unless SAME_SIZE, a reference's ref column value), or a REC(tid) that
 * starts a record of thread tid, FR (the frame ends), END (the file
 * ends).  Every event has SAME_TIME unless NT.
 *
 * Version 8 (a record's tags column):
 * - {TP, 0, ON(&table)}: a TAG_PAIRS record of table (a db_pairs), by
 *   which the records after it in its frame are coded;
 * - {TPC, 0, ON(&table)}: the records after it are coded by table, the
 *   file's own table unchanged (codes the file's table lacks);
 * - {TPRAW, 0, ON(&payload)}: a TAG_PAIRS record whose payload is the
 *   db_buf given (also in an older version's file);
 * - {REC, tid, how}: how the record's tags column is written: TAGS_CODED
 *   (0: by the table the script codes by, or the tags as they are if
 *   none), TAGS_PLAIN (as they are, whatever the table), TAGS_CUT (the
 *   coded column without its last byte), TAGS_MORE (with a byte 0
 *   more), TAGS_ESCAPED (every pair escaped). */
enum { REC = 0x1000u, FR = 0x2000u, END = 0x4000u, NT = 0x800u };
enum { TP = 0x8000u, TPC = 0x10000u, TPRAW = 0x20000u };
enum { TAGS_CODED, TAGS_PLAIN, TAGS_CUT, TAGS_MORE, TAGS_ESCAPED };

typedef struct step {
    unsigned tag;
    uint32_t trace;
    uint64_t v; /* TP, TPC: a db_pairs, TPRAW: a db_buf, as ON(its address) */
} step;
#define ON(p) ((uint64_t)(uintptr_t)(p))

#define A MT_DAT_EV_ALLOC
#define R MT_DAT_EV_FREE_REF
#define P MT_DAT_EV_FREE_PREV
#define O 0x80u /* tag bit 7 (SAME_SIZE on an ALLOC or FREE): bad on a reference */
#define ST MT_DAT_EV_SAME_TRACE
#define SS MT_DAT_EV_SAME_SIZE

/* The file a script makes: db_culled_head (traces 0 to 2), then its
 * frames, frame i's records at (2000 + i) s. */
void ts_build(const step *s, uint32_t version, db_file *f);

/* f in an anonymous file, opened. */
mt_dat_reader *ts_open_mem(const db_file *f, mt_err *err);

/* The allocations' and frees' sizes, up to max, per runs of `per` (0:
 * one event at a time); their count, the code that ended the reading in
 * *end. */
size_t ts_read_sizes(const db_file *f, size_t per, uint64_t *out, size_t max, mt_errc *end,
                     mt_err *err);

/* The script in a file of `version` read three ways (one event at a
 * time, in runs of 1 and 256) gives the sizes want[0, n) and ends with
 * MT_E_EMPTY, or (msg) ends in MT_E_CORRUPT with msg after them; and
 * (without msg) the same from each frame after a seek. */
void ts_expect(const step *s, uint32_t version, const uint64_t *want, size_t n, const char *msg);

/* f read one event at a time, in runs of 1, 37 and 256, and from each
 * frame after a seek, gives want's sizes and ends cleanly. */
void ts_expect_file(const db_file *f, const uint64_t *want, size_t n);

#endif
