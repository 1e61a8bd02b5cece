/* shm_modules_holders.h -- which modules held each address, indexed, for
 * mt_modules_find and mt_modules_find_at (shm_modules.c): a binary search
 * instead of a walk of every module that held the address, which a
 * recording of a plugin loaded and unloaded thousands of times at one
 * place makes thousands.  Private to src/ipc. */
#ifndef MEMTOP_SHM_MODULES_HOLDERS_H
#define MEMTOP_SHM_MODULES_HOLDERS_H

#include <stdbool.h>
#include <stdint.h>

#include "shm_modules.h"

/* When m stopped holding its addresses, as a trace id: UINT64_MAX while
 * loaded, 0 when not known. */
static inline uint64_t mt_module_gone_at(const mt_module_info *m)
{
    return m->unload_seq == 0 ? UINT64_MAX : m->unload_trace;
}

/* Whether cand is a better default holder of an address than best: a
 * loaded one before an unloaded one, then the latest. */
static inline bool mt_module_better(const mt_module_info *cand, const mt_module_info *best)
{
    if (!best)
        return true;
    if ((cand->unload_seq == 0) != (best->unload_seq == 0))
        return cand->unload_seq == 0;
    return cand > best;
}

/* m's index, built now if m changed since it was (m->gen, m->count); NULL
 * when there is none (out of memory, or more entries than a bound: the
 * callers walk the modules).  A cache in m behind a const pointer: a map
 * is looked up by one thread at a time, or indexed before it is shared
 * (mt_modules_index_holders). */
const mt_holders *mt_holders_of(const mt_modules *m);
void mt_holders_free(mt_holders *h);

/* mt_modules_find and mt_modules_find_at (trace > 0), from the index. */
const mt_module_info *mt_holders_find(const mt_holders *h, const mt_modules *m, uint64_t addr);
const mt_module_info *mt_holders_find_at(const mt_holders *h, const mt_modules *m, uint64_t addr,
                                         uint32_t trace);

#endif
