/* publish_modules.h -- publish the loaded modules (for symbolization by viewers). */
#ifndef MT_MODULES_H
#define MT_MODULES_H

#include "core_loader_gate.h"
#include "publish_shm.h"

#include <stdbool.h>

/* The modules the publisher has put into the segment (not the viewer's
 * mt_modules of shm_modules.h, which reads them back). */
typedef struct mt_published_modules mt_published_modules;

mt_published_modules *mt_modules_new(void);
/* Forgets what was published (a fork child publishes into a new segment). */
void mt_modules_reset(mt_published_modules *m);
/* Appends modules loaded since the last call and marks unloaded ones. */
void mt_modules_sync(mt_published_modules *m, mt_shm_writer *w, uint64_t publish_seq);

/* dl_iterate_phdr's count of unloaded objects (dlpi_subs) at the last
 * sync. */
unsigned long long mt_modules_unloads(const mt_published_modules *m);

/* The one walk of the loaded modules, shared by the publisher (above) and
 * the recording writer (record_records.c): each keeps its own list of the
 * modules it has told about and an mt_module_scan.  The walk is skipped
 * (returns false) when dl_iterate_phdr's adds/subs counters did not move
 * since the last walk; else `scan` is bumped and visit is called for each
 * module with a mapped range (its record described by mt_module_describe,
 * and its identity: a hash that tells two modules loaded at one address
 * apart, so that a library loaded where another was is a new module, not
 * the first one still loaded), after which the caller marks unloaded every module of its list not
 * visited in this scan.  Runs with the loader's lock held (keep visit
 * short), through iterate: dl_iterate_phdr under the publish lock, which
 * fork takes; mt_loader_iterate elsewhere (core_loader_gate.h: no fork
 * must catch the lock held). */
typedef struct mt_module_scan {
    unsigned long long adds, subs;
    uint32_t scan; /* walks done; 0: none yet */
} mt_module_scan;
bool mt_module_scan_run(mt_module_scan *s, int (*iterate)(mt_dl_iter_cb, void *),
                        void (*visit)(const mt_shm_module *rec, uint64_t ident, void *arg),
                        void *arg);

/* The loader's load and unload counts (dlpi_adds, dlpi_subs), from its
 * first module: a dl_iterate_phdr callback that stops there, arg an
 * unsigned long long[2] (left as it is when no module is listed). */
struct dl_phdr_info;
int mt_module_peek_counts(struct dl_phdr_info *info, size_t size, void *arg);

/* Fills a module record from a dl_iterate_phdr entry (bias, address
 * range, build-id from the in-memory notes, path); also used by the
 * recording writer (record_modules.c). */
void mt_module_describe(const struct dl_phdr_info *info, mt_shm_module *out);

/* Where its GNU build-id's bytes are in memory (*len of them, at most
 * MT_BUILD_ID_MAX), or NULL if it has none. */
const uint8_t *mt_module_build_id(const struct dl_phdr_info *info, uint32_t *len);

/* The address range its PT_LOAD segments span, [*start, *end); 0, 0 if
 * nothing is mapped. */
void mt_module_span(const struct dl_phdr_info *info, uint64_t *start, uint64_t *end);

#endif
