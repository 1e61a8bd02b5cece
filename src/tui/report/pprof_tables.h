/* pprof_tables.h -- the two lookup tables a pprof profile is built with:
 * the string table (every string once, index 0 the empty string, as
 * profile.proto requires) and a map from a 64-bit key (an address, a module,
 * a pair of string indices) to the id given to it.  Both grow by doubling
 * and report running out of memory as -1. */
#ifndef MEMTOP_PPROF_TABLES_H
#define MEMTOP_PPROF_TABLES_H

#include <stddef.h>
#include <stdint.h>

typedef struct mt_pp_strings {
    char **items; /* owned copies; items[0] = "" */
    size_t count, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 = empty */
    size_t nslots;
} mt_pp_strings;

/* 0, or -1 when out of memory. */
int mt_pp_strings_init(mt_pp_strings *s);
void mt_pp_strings_free(mt_pp_strings *s);
/* The index of str (NULL: the empty string, 0), added if new; bytes that
 * are not UTF-8 become U+FFFD, as in the JSON export.  -1 when out of
 * memory. */
int64_t mt_pp_string(mt_pp_strings *s, const char *str);

typedef struct mt_pp_ids {
    uint64_t *keys, *vals; /* vals 0 = empty slot: ids start at 1 */
    size_t cap, used;
} mt_pp_ids;

void mt_pp_ids_init(mt_pp_ids *m);
void mt_pp_ids_free(mt_pp_ids *m);
/* The id of key, or 0 if it has none. */
uint64_t mt_pp_id_get(const mt_pp_ids *m, uint64_t key);
/* Give key the id (>= 1).  0, or -1 when out of memory. */
int mt_pp_id_put(mt_pp_ids *m, uint64_t key, uint64_t id);

#endif
