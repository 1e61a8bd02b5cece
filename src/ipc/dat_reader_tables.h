/* dat_reader_tables.h -- filling the viewer's trace definitions (mt_defs)
 * and module map (mt_modules) from recording events instead of a segment.
 *
 * Why: the reports and exports look frames and modules up through mt_defs
 * and mt_modules; a replay feeds them the same way the live reader does,
 * with the same checks (dense ids, depth, address ranges). */
#ifndef MEMTOP_DAT_READER_TABLES_H
#define MEMTOP_DAT_READER_TABLES_H

#include "dat_reader.h"
#include "shm_defs.h"
#include "shm_modules.h"

/* Append a definition; its id must be d->count.  first_seen_ns: when. */
mt_errc mt_dat_defs_add(mt_defs *d, const mt_dat_def *def, uint64_t first_seen_ns, mt_err *err);

/* Append a module (load_seq: a counter for "newest wins").  The address
 * index is rebuilt, so add modules in batches where that matters. */
mt_errc mt_dat_modules_add(mt_modules *m, const mt_dat_module *mod, uint64_t load_seq, mt_err *err);

/* Mark the newest loaded module starting at start as unloaded. */
void mt_dat_modules_unload(mt_modules *m, uint64_t start, uint64_t seq);

#endif
