/* group.h -- the table's row labels: a string arena owned by the table (so
 * labels stay valid until the next build, whatever the namer does with its
 * buffers) and a hash from label to row for function/file/module grouping.
 * Reused from build to build: no allocation per row.  Sized to the rows
 * actually added (grouped: the groups, TRACE: only fallback labels), not
 * to the traces. */
#ifndef MEMTOP_MODEL_GROUP_H
#define MEMTOP_MODEL_GROUP_H

#include <stddef.h>
#include <stdint.h>

typedef struct mt_groups {
    char *arena; /* labels, NUL-terminated, back to back */
    size_t used, cap;
    size_t *off;    /* per row: offset of its label in arena */
    uint64_t *hash; /* per row: hash of its label (grouping only) */
    size_t nrows, cap_rows;
    uint32_t *slots; /* open addressing: row + 1, 0 = empty; at most half full */
    size_t nslots;   /* power of two */
} mt_groups;

void mt_groups_init(mt_groups *g);
void mt_groups_free(mt_groups *g);
/* Starts a build (no rows); 0 or -1 (memory). */
int mt_groups_begin(mt_groups *g);
/* Appends a row labelled label, not hashed (not found by find_or_add);
 * its index, or -1 (memory). */
long mt_groups_add(mt_groups *g, const char *label);
/* The row labelled label (added now if new; *added says so); -1 (memory). */
long mt_groups_find_or_add(mt_groups *g, const char *label, int *added);
const char *mt_groups_label(const mt_groups *g, size_t row);
/* The hash of a label (FNV-1a), as the groups and the call trees use it. */
uint64_t mt_label_hash(const char *s);

#endif
