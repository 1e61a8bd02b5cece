/* sym_table.h -- the background symbolizer's records: one per trace
 * location or per address asked about, holding the request (the frames)
 * and, once the worker is done, the answer.  Records live until the table
 * is freed, so the worker can read a record's frames without a lock and
 * memory stays proportional to the distinct keys asked about.  Not
 * thread-safe: the worker's lock guards it. */
#ifndef MEMTOP_SYM_TABLE_H
#define MEMTOP_SYM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "location.h"

typedef enum mt_symw_kind {
    MT_SYMW_LOCATION = 1, /* key: trace id; frames: the trace */
    MT_SYMW_FRAMES = 2,   /* key: address; frames[0]: the address */
    /* key: address and module (sym_lookup.c at_key); frames: the address
     * and a trace whose module there is
     * not the one it names by default (a module loaded at the place of one
     * unloaded: mt_modules_find_at) */
    MT_SYMW_FRAMES_AT = 3,
} mt_symw_kind;

typedef struct mt_symw_entry {
    struct mt_symw_entry *next_all; /* every record, for freeing */
    uint64_t key;
    uint64_t qseq;     /* sequence number of its queue slot; 0: not queued */
    uint64_t mod_gen;  /* module map the answer was computed with */
    uint64_t wrap_gen; /* wrapper set (LOCATION) the answer was computed with */
    uint64_t mod_load; /* FRAMES kinds: load_seq of the module it named (0: none) */
    mt_frame *res;     /* the answer (strings interned); NULL until symbolized */
    unsigned nres;
    bool busy;   /* the worker is symbolizing it */
    bool orphan; /* replaced (trace id seen again with other frames) */
    uint8_t kind;
    unsigned nframes; /* immutable after creation, like frames */
    uint64_t frames[];
} mt_symw_entry;

typedef struct mt_symw_table {
    mt_symw_entry **slots; /* open addressing; NULL = empty */
    size_t cap, used;
    mt_symw_entry *all;
} mt_symw_table;

void mt_symw_table_init(mt_symw_table *t);
/* Frees every record and its answer. */
void mt_symw_table_free(mt_symw_table *t);

/* The record of (kind, key), or NULL. */
mt_symw_entry *mt_symw_table_find(const mt_symw_table *t, mt_symw_kind kind, uint64_t key);

/* A new record of (kind, key) for frames[0..n-1] (n >= 1) that replaces the
 * old one, if any (marked orphan, kept until the table is freed); NULL when
 * out of memory. */
mt_symw_entry *mt_symw_table_add(mt_symw_table *t, mt_symw_kind kind, uint64_t key,
                                 const uint64_t *frames, unsigned n);

#endif
