/* pprof_build.h -- the frames half of a pprof profile: one Location per
 * machine frame (address), with its Mapping (the module: path, build id,
 * address range) and its Lines (function, file, line; a frame with inlined
 * functions has one Line per source frame, innermost first, as
 * profile.proto orders them), and the Function and string tables they
 * refer to.  Names come from the same mt_locate_all every export uses, so
 * the profile names each frame exactly as the JSON export does.
 *
 * The messages are protobuf-c's, generated at build time from Debian's
 * profile.proto (see CMakeLists.txt); mt_pp_finish links them into a
 * Profile, which stays valid until mt_pp_free. */
#ifndef MEMTOP_PPROF_BUILD_H
#define MEMTOP_PPROF_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "location.h"
#include "pprof_tables.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Location mt_pp_location;
typedef Perftools__Profiles__Line mt_pp_line;
typedef Perftools__Profiles__Function mt_pp_function;
typedef Perftools__Profiles__Mapping mt_pp_mapping;

typedef struct mt_pp_builder {
    const mt_locator *loc;
    mt_pp_strings str;
    mt_pp_ids loc_ids, fn_ids, map_ids;
    /* (module, address) of a frame not in the module that holds the address
     * by default -> 1 + the index of the first Location made for it (its
     * lines are copied, not looked up again: mt_pp_location_of) */
    mt_pp_ids other_locs;
    mt_pp_location *locs;
    size_t nlocs, locs_cap;
    size_t *first_line; /* locs[i]'s lines are lines[first_line[i]..] */
    size_t first_cap;
    mt_pp_line *lines;
    size_t nlines, lines_cap;
    mt_pp_function *fns;
    size_t nfns, fns_cap;
    mt_pp_mapping *maps;
    size_t nmaps, maps_cap;
    /* pointer arrays that mt_pp_finish makes for the Profile */
    mt_pp_location **loc_ptrs;
    mt_pp_line **line_ptrs;
    mt_pp_function **fn_ptrs;
    mt_pp_mapping **map_ptrs;
} mt_pp_builder;

/* 0, or -1 when out of memory. */
int mt_pp_init(mt_pp_builder *b, const mt_locator *loc);
void mt_pp_free(mt_pp_builder *b);

/* Makes the main program's Mapping the first one (pprof takes mapping 1
 * for the main binary: `File:` in go tool pprof), even if no frame is in
 * it: the module whose path is exe, else the first module the target
 * published (dl_iterate_phdr's first, the main program).  Call before any
 * location is added.  0, or -1 when out of memory. */
int mt_pp_main_mapping(mt_pp_builder *b, const char *exe);

/* The id of the Location of the machine frame at address of trace (0:
 * any; mt_locator.trace), made on first use; 0 when out of memory. */
uint64_t mt_pp_location_of(mt_pp_builder *b, uint64_t address, uint32_t trace);

/* A Location of no module whose one Line names the function name: for the
 * "(overflow)" and "(other)" rows, which have no frames.  0 when out of
 * memory. */
uint64_t mt_pp_pseudo_location(mt_pp_builder *b, const char *name);

/* Fill p's string table, locations, functions and mappings.  0, or -1 when
 * out of memory. */
int mt_pp_finish(mt_pp_builder *b, Perftools__Profiles__Profile *p);

#endif
