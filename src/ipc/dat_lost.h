/* dat_lost.h -- the causes of a recording's dropped events (LOST records,
 * dat_format.h MT_DAT_LOST_*; the segment's header.rec_dropped_why) in
 * words, shared by the .dat reader's users and the live view.  No zstd: part
 * of memtop_ipc. */
#ifndef MEMTOP_DAT_LOST_H
#define MEMTOP_DAT_LOST_H

#include <stddef.h>
#include <stdint.h>

#include "dat_format.h"

/* Indexes of mt_dat_lost.why beyond the file's causes (MT_DAT_LOST_*). */
enum {
    MT_DAT_LOST_OTHER = MT_DAT_LOST_CAUSES,        /* a cause this reader does not know */
    MT_DAT_LOST_NOT_SAID = MT_DAT_LOST_CAUSES + 1, /* an older writer: no cause in the file */
    MT_DAT_LOST_WHY_N = MT_DAT_LOST_CAUSES + 2,
};

/* a + b, at most UINT64_MAX: drop counts are untrusted. */
static inline uint64_t mt_dat_lost_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* A cause in plain words ("disk behind"), and as a key ("disk_behind");
 * why < MT_DAT_LOST_WHY_N. */
const char *mt_dat_lost_words(unsigned why);
const char *mt_dat_lost_key(unsigned why);
/* "N events dropped: disk behind A, writer stalled (wait cap) B" into buf (n bytes),
 * naming the causes of why[] that are not 0, the ones not known as "cause
 * not recorded" (total - their sum, when total is larger).  Returns buf. */
char *mt_dat_lost_line(uint64_t total, const uint64_t why[MT_DAT_LOST_WHY_N], char *buf, size_t n);

/* A buffer that holds any such line whole: "N events dropped" (at most 36
 * bytes) and all 8 causes, each ", " or ": ", at most 25 bytes of words,
 * " " and at most 20 digits: 358 bytes.  A shorter one could cut a count in
 * the middle of its digits, a wrong number shown as one. */
#define MT_DAT_LOST_LINE_MAX 512

#endif
