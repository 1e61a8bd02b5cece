/* table_trace_places.h -- the places of modules that dlclose unloaded, and
 * which build of a module the retired traces there were taken in: so that
 * a library unloaded and loaded again at its place gets its traces back
 * (table_trace_index.c, "Retired traces"). */
#ifndef MT_TRACE_PLACES_H
#define MT_TRACE_PLACES_H

#include "shm_layout.h"

#include <stdbool.h>
#include <stdint.h>

/* A module that went away: its code's range [lo, hi), and its build-id,
 * whose id_len bytes were at id_at while it was loaded (id_len 0: none). */
typedef struct mt_code_range {
    uint64_t lo, hi, id_at;
    uint32_t id_len;
    uint32_t since; /* every trace taken in it has an id >= since (0: not known) */
    uint8_t id[MT_BUILD_ID_MAX];
} mt_code_range;

/* Notes the n modules a dlclose unloaded, stamped with the next trace id
 * (every trace taken in them has a smaller one): the history of each
 * place, a run of unloads of one build at one place kept as one entry
 * with the ids of the traces taken in it.  Bounded: the oldest entries
 * are forgotten (their traces are not given back). */
void mt_places_add(const mt_code_range *gone, uint32_t n, uint32_t stamp);

/* Whether any place was noted (a relaxed load: the lookups' fast test). */
bool mt_places_any(void);

/* Whether the module now at the frames of retired trace id is the build
 * they were taken in (its build-id, read where it was, is the same): then
 * the trace may be given back.  False when it cannot be told (a frame at a
 * place whose history does not cover id, no build-id, nothing mapped
 * there, id older than a forgotten entry's stamp: one of its frames may be
 * at that place) or no frame is at a noted place.  Reads memory through
 * /proc (mt_os_read_self), which cannot fault and which no seccomp filter
 * of a hardened service kills for, as it may for process_vm_readv. */
bool mt_places_same(uint32_t id, const uint64_t *frames, uint32_t n);

/* Trace id was given back (its key made live again): the next
 * retirement looks at it even if it is older than every module it
 * retires (mt_traces_retire).  Noted once, however often given back.  At
 * most MT_PLACES_GIVEN_BACK live at once: past that, every retirement looks
 * at every trace from then on. */
#define MT_PLACES_GIVEN_BACK 256u
void mt_places_given_back(uint32_t id);

/* Copies the ids given back (and not retired) so far into
 * ids[MT_PLACES_GIVEN_BACK]; their number.  *all: some were not kept.  The
 * list stays: a retirement running at the same time (another thread's
 * dlclose) must see them too, as one of its modules may hold one. */
uint32_t mt_places_read_given_back(uint32_t *ids, bool *all);

/* After a retirement: drops from the list the ids no longer live(id)
 * (retired).  One given back again meanwhile is live, and stays. */
void mt_places_prune_given_back(bool (*live)(uint32_t id));

/* fork support (mt_traces_lock_all): the places' lock. */
void mt_places_lock(void);
void mt_places_unlock(void);

#endif
