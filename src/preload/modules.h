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

#endif
