/* sym_mods.h -- reference-counted, immutable copies of the module map for
 * the background symbolizer.  The screen's own map changes as the target
 * loads libraries; the worker symbolizes against a copy of its own without
 * holding a lock, while lookups use the latest copy.  The reference count
 * is not atomic: the worker's lock guards it. */
#ifndef MEMTOP_SYM_MODS_H
#define MEMTOP_SYM_MODS_H

#include <stdbool.h>
#include <stdint.h>

#include "memtop_ipc.h"

typedef struct mt_symw_mods {
    mt_modules map;
    uint64_t gen; /* 0 for the empty map, then increasing with each new map */
    unsigned refs;
} mt_symw_mods;

/* A copy of src (NULL: empty) with one reference; NULL when out of memory. */
mt_symw_mods *mt_symw_mods_copy(const mt_modules *src, uint64_t gen);

/* Whether s describes the same modules as src (cheap: no allocation). */
bool mt_symw_mods_same(const mt_symw_mods *s, const mt_modules *src);

/* Take a reference; drop one: true when it was the last (then free s, best
 * after releasing the lock). */
mt_symw_mods *mt_symw_mods_ref(mt_symw_mods *s);
bool mt_symw_mods_unref(mt_symw_mods *s);

/* NULL ok. */
void mt_symw_mods_free(mt_symw_mods *s);

#endif
