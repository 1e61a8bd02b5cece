/* sym_intern.h -- string interning for the background symbolizer: one
 * owned copy of each distinct string (module paths, function and file
 * names), so cached results are small pointers that stay valid for the
 * worker's whole life, whatever happens to the module map they came from. */
#ifndef MEMTOP_SYM_INTERN_H
#define MEMTOP_SYM_INTERN_H

#include <stddef.h>

typedef struct mt_interner {
    char **slots; /* open addressing; NULL = empty */
    size_t cap, used;
} mt_interner;

void mt_intern_init(mt_interner *t);
/* Frees every string handed out. */
void mt_intern_free(mt_interner *t);

/* The unique copy of s, valid until mt_intern_free; NULL when s is NULL or
 * memory runs out. */
const char *mt_intern_get(mt_interner *t, const char *s);

#endif
