/* test_reader_builder.h -- builds recordings (.dat) by hand for the reader
 * and replay tests: records from varints, strings and payloads, grouped
 * into zstd frames, behind the file header (dat_format.h).  Knows nothing
 * of the reader, so a reader bug cannot hide in it.  Its EVENTS2 records
 * are written as version 6 reads them (every reference among every
 * thread's blocks), so its complete files say version 6
 * (MT_DAT_VERSION_PREV); test_reader_v7.c builds version 7's, and
 * db_ev2_record8 version 8's (test_reader_v8.c). */
#ifndef MEMTOP_TEST_READER_BUILDER_H
#define MEMTOP_TEST_READER_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"
#include "test_xorshift.h"

typedef struct db_buf {
    unsigned char *p;
    size_t n, cap;
} db_buf;

void db_bytes(db_buf *b, const void *p, size_t n);
void db_v(db_buf *b, uint64_t v);
void db_z(db_buf *b, int64_t v);
void db_s(db_buf *b, const char *s);
void db_buf_free(db_buf *b);

#define DB_MAX_FRAMES 256

typedef struct db_file {
    db_buf out;   /* the file so far */
    db_buf frame; /* records of the frame being built */
    size_t nframes;
    size_t frame_end[DB_MAX_FRAMES];   /* file offset where frame i ends */
    size_t frame_items[DB_MAX_FRAMES]; /* events (items) in frames 0..i */
    size_t items;                      /* events the reader will give so far */
} db_file;

/* The 32-byte header; version and endian mark as given. */
void db_file_init(db_file *f, uint32_t version, uint32_t endian_mark);
void db_file_free(db_file *f);

/* Append a record (type, payload) to the current frame; `items` is how many
 * events the reader gives for it. */
void db_rec(db_file *f, uint64_t type, const db_buf *payload, size_t items);

/* Compress the current frame (with a checksum) and append it. */
void db_flush(db_file *f);

int db_write(const void *p, size_t n, const char *path);
/* An anonymous file (memfd) holding f's bytes, or -1. */
int db_memfd(const db_file *f);

/* EVENTS2 records (dat_format.h) by hand: each event's tag and fields go
 * to their columns, db_ev2_record writes the record (and empties e). */
enum { DB_TIMES = 1, DB_TRACES, DB_SIZES, DB_REFS, DB_AGES, DB_COLS };

typedef struct db_ev2 {
    db_buf col[DB_COLS][2]; /* [0][0]: tags; [c][0] lead, [c][1] tail bytes */
    size_t n;               /* events (tags) so far */
} db_ev2;

void db_ev2_tag(db_ev2 *e, unsigned tag);
void db_ev2_put(db_ev2 *e, unsigned col, uint64_t v);
void db_ev2_record(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base);
void db_ev2_free(db_ev2 *e);

/* Version 8's paired tags (dat_format.h, "Version 8"): a table as a
 * TAG_PAIRS record gives it, per context its pairs (first tag | second
 * << 8), code x the x-th; a context with n 0 is not listed. */
typedef struct db_pairs {
    unsigned n[256];
    uint16_t p[256][255];
} db_pairs;

/* A TAG_PAIRS record of t. */
void db_tag_pairs(db_file *f, const db_pairs *t);
/* e's tags coded by t into out (emptied first): a pair of its context in
 * t as its code, else an escape (also, when rng is given, one pair in 8
 * drawn from it that t has); a last, odd tag as it is. */
void db_ev2_code(const db_pairs *t, const db_ev2 *e, db_buf *out, uint64_t *rng);
/* db_ev2_record in version 8's head (tags_len = len), the tags column
 * `tags` of len bytes (NULL: e's tags as they are). */
void db_ev2_record8(db_file *f, db_ev2 *e, uint64_t tid, uint64_t base, const unsigned char *tags,
                    size_t len);

/* A complete recording: PROCESS, 2 modules, 3 traces (0: no frames), then
 * `seconds` rounds of EVENTS (2 threads) + TOTALS, one frame per round,
 * then FINAL and END unless `finalize` is 0.  Every allocation of round i
 * is at t = i s + 1000 ns * k.  Traces 1 and 2 leak 100 bytes per round
 * (trace 1) and 10 bytes per round (trace 2); trace 1 also makes a
 * temporary of 7 bytes per round.  Thread 1's events are an EVENTS2
 * record (its free names its block); thread 2's an EVENTS2 record whose
 * free is written in full (rounds 0, 3, ...) or names its block (1, 4,
 * ...), or a version-1 EVENTS record (2, 5, ...). */
void db_standard(db_file *f, unsigned seconds, int finalize);

/* db_standard's rounds (not finalized), each followed by an ALLOCATORS
 * record in a frame of its own (round i: i % MT_ALLOC_MAX + 1 entries,
 * every other one NOT exact, with its note; `more` 1 from round 3 on). */
void db_allocators(db_file *f, unsigned seconds);

/* The same, finalized with END(reason) (MT_DAT_END_*), or not at all when
 * reason is 0. */
void db_standard_end(db_file *f, unsigned seconds, unsigned reason);
/* db_standard_end with PROCESS's record_start at record_start (else 0). */
void db_standard_from(db_file *f, unsigned seconds, unsigned reason, uint64_t record_start);

/* A culled recording (version, PROCESS record_mode, cull_ms as given;
 * young_max 16): db_standard's head, then a TOTALS, one frame. */
void db_culled_head(db_file *f, uint32_t version, uint64_t mode, uint64_t cull_ms);
/* The same with PROCESS's version-5 order field (-1: none, a cut field). */
void db_order_head(db_file *f, uint32_t version, uint64_t mode, uint64_t cull_ms, int order);
/* A CULLED record at t (written_early 7, young 3) of n entries: id_delta,
 * count, bytes, temporary_count, temporary_bytes. */
void db_culled_rec(db_file *f, uint64_t t, const uint64_t (*e)[5], size_t n);
/* db_standard's rounds in a culled recording (1 s), each with a CULLED
 * record at i.5 s: trace 1 three blocks of 30 bytes (1 temporary, 10
 * bytes), trace 2 one of 8. */
void db_culled(db_file *f, unsigned seconds, int finalize);

/* db_standard's rounds, FINAL and END(exit) in a sampled recording: a
 * version-6 PROCESS (full mode, thread order) whose sample_rate_bytes is
 * rate.  Every TOTALS, the FINAL set's too, has alloc_count 2, alloc_bytes
 * 3 and free_count 4 (field i holds i), the target's exact counts there. */
void db_sampled(db_file *f, unsigned seconds, uint64_t rate);

/* A TOTALS record at t (live bytes, peak as given; the other fields
 * db_standard's). */
void db_totals(db_file *f, uint64_t t, uint64_t live, uint64_t peak);

/* A version-4 recording of long EVENTS2 records (test_reader_long.c):
 * db_culled_head (full mode), then `frames` frames of one record of
 * `events` events (thread 5), a TOTALS and one of events / 2 (thread 6):
 * allocations on 3 traces (NEXT_TRACE, SAME_SIZE, SAME_TIME, SAME_TRACE,
 * sizes of 1 to 6 varint bytes), frees naming a trace's newest or older
 * blocks (of either record of the frame), frees in full; blocks still
 * live at the TOTALS and at the frame's end. */
void db_long(db_file *f, unsigned frames, unsigned events);
/* The same in tick order (PROCESS order 1): the traces column holds steps. */
void db_long_ticks(db_file *f, unsigned frames, unsigned events);

/* A random version-7 recording (test_reader_v7model.c): db_culled_head,
 * then `frames` frames of 6 EVENTS2 records of threads 1 to 3 on traces 0
 * to 2 (references of the frame and the frame before, runs of
 * references, rising sizes), from seed; the sizes of its allocations
 * and frees, in file order, in *out (at most DB_V7_WANT). */
#define DB_V7_WANT 60000u
typedef struct db_v7_sizes {
    uint64_t want[DB_V7_WANT];
    size_t n;
} db_v7_sizes;
void db_v7_random(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out);
/* The same events (the same seed, the same *out) in a version-8 file:
 * per frame no TAG_PAIRS, or a random one first and maybe a second one
 * later, the tags coded by the one in force, with random escapes. */
void db_v8_random(db_file *f, unsigned frames, uint64_t seed, db_v7_sizes *out);

/* What db_standard's recording holds at the end. */
#define DB_STD_EVENTS_PER_ROUND 6u

#endif
