/* names_cache.h -- the names the table shows for each trace, as an
 * mt_namer over the background symbolizer.  A trace's strings are made
 * once when its names are final; until then they are the module+offset
 * fallback and are asked for again only when the symbolizer has news, so
 * building 100,000 rows does not re-format 100,000 strings every second. */
#ifndef MEMTOP_NAMES_CACHE_H
#define MEMTOP_NAMES_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "memtop_ipc.h"
#include "sym_worker.h"
#include "table.h"

typedef struct mt_name_entry mt_name_entry;

typedef struct mt_names {
    mt_symworker *w;
    const mt_defs *defs; /* the view's definitions (frames of each trace) */
    mt_name_entry *items;
    size_t count;
} mt_names;

void mt_names_init(mt_names *n, mt_symworker *w, const mt_defs *defs);
void mt_names_free(mt_names *n);

/* The string of grouping g for trace id (never NULL; "?" when the trace
 * has no definition or memory ran out). */
const char *mt_names_get(mt_names *n, uint32_t id, mt_group_key g);

/* The innermost shown frame of trace id (see mt_trace_location); false
 * while not final. */
bool mt_names_frame(mt_names *n, uint32_t id, mt_frame *out);

/* Ask the symbolizer for trace id again if its names are not final, so
 * that the rows on screen go to the front of its queue. */
void mt_names_prioritize(mt_names *n, uint32_t id);

mt_namer mt_names_namer(mt_names *n);

#endif
