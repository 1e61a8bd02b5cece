/* addr_set.h -- a set of frame addresses: the call sites that the shape
 * rule (src/tui/model/wrapper_shape.h) found to be allocator wrappers.
 * mt_trace_location treats a frame whose address is in its locator's set
 * as plumbing, unless a user's "!name" keeps its function.  Built once per
 * report, then read-only: sorted, looked up by binary search. */
#ifndef MEMTOP_ADDR_SET_H
#define MEMTOP_ADDR_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mt_addr_set {
    uint64_t *addrs; /* sorted, unique once mt_addr_set_seal ran */
    size_t n, cap;
} mt_addr_set;

void mt_addr_set_init(mt_addr_set *s);
void mt_addr_set_free(mt_addr_set *s);
/* Adds a (duplicates are fine until sealed); false when out of memory. */
bool mt_addr_set_add(mt_addr_set *s, uint64_t a);
/* Sorts and removes duplicates; call before mt_addr_set_has. */
void mt_addr_set_seal(mt_addr_set *s);
bool mt_addr_set_has(const mt_addr_set *s, uint64_t a);

#endif
