/* modules.h -- publish the loaded modules (for symbolization by viewers). */
#ifndef MT_MODULES_H
#define MT_MODULES_H

#include "shm_writer.h"

#include <stdbool.h>

typedef struct mt_modules mt_modules;

mt_modules *mt_modules_new(void);
/* Forgets what was published (a fork child publishes into a new segment). */
void mt_modules_reset(mt_modules *m);
/* Appends modules loaded since the last call and marks unloaded ones. */
void mt_modules_sync(mt_modules *m, mt_shm_writer *w, uint64_t publish_seq);

/* dl_iterate_phdr's count of unloaded objects (dlpi_subs) at the last
 * sync. */
unsigned long long mt_modules_unloads(const mt_modules *m);

/* Fills a module record from a dl_iterate_phdr entry (bias, address
 * range, build-id from the in-memory notes, path); also used by the
 * recording writer (record_modules.c). */
struct dl_phdr_info;
void mt_module_describe(const struct dl_phdr_info *info, mt_shm_module *out);

#endif
