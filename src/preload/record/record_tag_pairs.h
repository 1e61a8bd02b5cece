/* record_tag_pairs.h -- the writer's side of format version 8's paired
 * tags (dat_format.h "Version 8", docs/recording-format.md 13 EVENTS2):
 * EVENTS2's tags column as one code byte per two tags, given the tag
 * before, while a TAG_PAIRS table holds in the zstd frame.
 *
 * Why: in tick order a tag says a lot about the next one (an allocation is
 * followed by its short-lived block's free, frees of one kind by more of
 * the same), which zstd's order-0 coding of literals does not see; a
 * frequent pair given its context becomes one byte of a few frequent
 * values, which it codes well.
 *
 * The writer's choice (not the format's): the pairs are counted as they
 * are coded, per frame.  A frame whose frame before counted at least
 * MT_TP_ENOUGH pairs starts with a TAG_PAIRS of that frame's pairs seen
 * twice or more; a frame without one gets one from its own counts once
 * they reach MT_TP_ENOUGH (before its next EVENTS2 record), and so does a
 * frame whose table escaped one pair in MT_TP_STALE or more of the
 * MT_TP_ENOUGH or more it coded (twice as many after each replacement in
 * the frame) (the program changed phase: the bench's
 * first frames hold allocations only, its frees come later).  Counts
 * with no pair seen twice give none; they are tried again once the
 * frame's pairs have doubled.  A slow stream's small frames never get one.
 *
 * The frame boundaries are record_zstd.c's: mt_tp_new_frame when a frame
 * ends, mt_tp_new_file when the file gets a frame with no frame before it
 * (a session, a rewind).  Memory: one mmap of 102 KiB on first use,
 * unmapped when the session ends; without it, tags are written as they are
 * (a valid version-8 file).  Writer thread only (the writer's lock held).
 */
#ifndef MT_RECORD_TAG_PAIRS_H
#define MT_RECORD_TAG_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_TP_ENOUGH 4096u /* pairs counted before a table is worth it */

/* Before an EVENTS2 record of the current frame (mt_w.pay empty, the
 * record still open): emits the TAG_PAIRS the frame should have now, if
 * any.  record_zstd.c may end a small frame after it, which writes the
 * open record first (coded with it); then none holds. */
void mt_tp_before_record(void);

/* The tags column of a record of n tags: the codes (with the table that
 * holds in the current frame) or the tags as they are; *len: its bytes.
 * Counts the record's pairs.  Valid until the next call. */
const unsigned char *mt_tp_code(const unsigned char *tags, uint32_t n, size_t *len);

/* The current frame ended: the next starts with no table (the counts
 * choose the one it will get), and its counts start at zero. */
void mt_tp_new_frame(void);

/* A frame with no frame before it comes next: no table, no counts. */
void mt_tp_new_file(void);

/* fork child: forgets the memory without unmapping it (the parent's
 * writer may have been using it at the fork). */
void mt_tp_child_reset(void);

/* Unmaps the memory (a session ended). */
void mt_tp_release(void);

/* For tests and the log: tables emitted, records coded with one, escapes. */
typedef struct mt_tp_stats {
    uint64_t tables, coded_records, escapes;
} mt_tp_stats;
const mt_tp_stats *mt_tp_get_stats(void);

#endif
