/* cache.h -- symbolization results by (module, offset): an open-addressing
 * hash table that owns the results it holds. */
#ifndef MEMTOP_SYM_CACHE_H
#define MEMTOP_SYM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

typedef struct mt_sym_cache_entry {
    uint32_t module; /* index in the module table + 1; 0 = empty slot */
    uint64_t offset;
    mt_sym_result *result;
} mt_sym_cache_entry;

typedef struct mt_sym_cache {
    mt_sym_cache_entry *slots;
    size_t cap, used; /* cap: a power of two */
} mt_sym_cache;

void mt_sym_cache_init(mt_sym_cache *c);
/* Frees every result too (see mt_sym_result_free). */
void mt_sym_cache_free(mt_sym_cache *c);

mt_sym_result *mt_sym_cache_get(const mt_sym_cache *c, uint32_t module, uint64_t offset);
/* Takes ownership of r; false when out of memory (r is then freed). */
bool mt_sym_cache_put(mt_sym_cache *c, uint32_t module, uint64_t offset, mt_sym_result *r);

/* A result with n frames (zeroed) in one allocation; NULL if out of memory. */
mt_sym_result *mt_sym_result_new(unsigned n);
void mt_sym_result_free(mt_sym_result *r);

#endif
