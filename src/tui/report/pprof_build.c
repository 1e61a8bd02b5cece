/* pprof_build.c -- Locations, Lines, Functions and Mappings of a pprof
 * profile (see pprof_build.h).  The records live in arrays that grow as
 * frames are added; the pointer arrays protobuf-c wants are made once at
 * the end, when nothing moves any more. */
#include "pprof_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_segment.h"
#include "grow.h"

int mt_pp_init(mt_pp_builder *b, const mt_locator *loc)
{
    memset(b, 0, sizeof *b);
    b->loc = loc;
    mt_pp_ids_init(&b->loc_ids);
    mt_pp_ids_init(&b->fn_ids);
    mt_pp_ids_init(&b->map_ids);
    mt_pp_ids_init(&b->other_locs);
    return mt_pp_strings_init(&b->str);
}

void mt_pp_free(mt_pp_builder *b)
{
    mt_pp_strings_free(&b->str);
    mt_pp_ids_free(&b->loc_ids);
    mt_pp_ids_free(&b->fn_ids);
    mt_pp_ids_free(&b->map_ids);
    mt_pp_ids_free(&b->other_locs);
    free(b->locs);
    free(b->first_line);
    free(b->lines);
    free(b->fns);
    free(b->maps);
    free(b->loc_ptrs);
    free(b->line_ptrs);
    free(b->fn_ptrs);
    free(b->map_ptrs);
    memset(b, 0, sizeof *b);
}

/* The build id as lower-case hex, as pprof and debuginfod spell it. */
static void build_id_hex(const mt_module_info *m, char *buf, size_t n)
{
    size_t len = m->build_id_len < MT_BUILD_ID_MAX ? m->build_id_len : MT_BUILD_ID_MAX;
    buf[0] = '\0';
    for (size_t i = 0; i < len && 2 * i + 2 < n; i++)
        snprintf(buf + 2 * i, n - 2 * i, "%02x", m->build_id[i]);
}

/* Where pprof is told module m lies: its executable segment (bias +
 * p_vaddr up to p_memsz) and the segment's file offset, since pprof, Parca
 * and Pyroscope find a frame's ELF address as address - memory_start +
 * file_offset (a file offset), then through the program headers.  The same
 * byte as the r-xp line of /proc/PID/maps names, not its page: Go's own
 * `go tool pprof` ignores file_offset and takes memory_start - the
 * segment's p_vaddr for the load bias.  When the segment cannot be read
 * from m's file (build-id checked) or does not fit the module as loaded:
 * m's whole range from file offset 0, right only when the code's file
 * offset equals its address (GNU ld's layouts, not lld's). */
static void place_mapping(const mt_pp_builder *b, const mt_module_info *m, mt_pp_mapping *mp)
{
    mp->memory_start = m->start;
    mp->memory_limit = m->end;
    unsigned len = m->build_id_len < MT_BUILD_ID_MAX ? m->build_id_len : MT_BUILD_ID_MAX;
    mt_sym_module sm = {m->path, m->build_id, len, b->loc->mods->pid, m->start, m->end};
    mt_exec_segment seg;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    if (!mt_exec_segment_of(&sm, &seg) || (seg.vaddr ^ seg.offset) & (page - 1))
        return;                           /* not mappable: p_vaddr = p_offset modulo the page */
    uint64_t end = seg.vaddr + seg.memsz; /* no overflow: mt_exec_segment_of */
    if (m->bias > UINT64_MAX - end || m->bias + seg.vaddr < m->start || m->bias + end > m->end)
        return; /* not the file loaded there */
    mp->memory_start = m->bias + seg.vaddr;
    mp->memory_limit = m->bias + end;
    mp->file_offset = seg.offset;
}

/* The Mapping of module m (made on first use); 0 when out of memory. */
static uint64_t mapping_of(mt_pp_builder *b, const mt_module_info *m)
{
    uint64_t key = (uint64_t)(m - b->loc->mods->items) + 1;
    uint64_t id = mt_pp_id_get(&b->map_ids, key);
    if (id)
        return id;
    if (mt_grow((void **)&b->maps, &b->maps_cap, b->nmaps + 1, sizeof *b->maps) != 0)
        return 0;
    char hex[2 * MT_BUILD_ID_MAX + 1];
    build_id_hex(m, hex, sizeof hex);
    mt_pp_mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT;
    mp.id = b->nmaps + 1;
    place_mapping(b, m, &mp);
    mp.filename = mt_pp_string(&b->str, m->path);
    mp.build_id = mt_pp_string(&b->str, hex);
    bool names = b->loc->symbolize != NULL;
    mp.has_functions = mp.has_filenames = mp.has_line_numbers = mp.has_inline_frames = names;
    if (mp.filename < 0 || mp.build_id < 0 || mt_pp_id_put(&b->map_ids, key, mp.id) != 0)
        return 0;
    b->maps[b->nmaps++] = mp;
    return mp.id;
}

int mt_pp_main_mapping(mt_pp_builder *b, const char *exe)
{
    const mt_modules *mods = b->loc->mods;
    if (!mods || !mods->count)
        return 0;
    const mt_module_info *main = &mods->items[0];
    for (size_t i = 0; exe && exe[0] && i < mods->count; i++)
        if (strcmp(mods->items[i].path, exe) == 0) {
            main = &mods->items[i];
            break;
        }
    return mapping_of(b, main) ? 0 : -1;
}

/* The Function of frame fr (made on first use); 0 when out of memory.
 * profile.proto's convention: name is the readable name (memtop's, as
 * every export shows it), system_name the symbol's linkage name (mangled
 * C++ or Rust) when the symbolizer has one, else the same as name.  A
 * name that differs from system_name is one pprof takes as demangled and
 * shows as it is; pprof's own shortening of a demangled name (cutting
 * every (...) and <...>) turns Rust's <T as Trait>::f into ::f, and
 * -symbolize=demangle=templates (or =full) re-demangles system_name. */
static uint64_t function_of(mt_pp_builder *b, const mt_frame *fr)
{
    int64_t n = mt_pp_string(&b->str, fr->function), f = mt_pp_string(&b->str, fr->file);
    int64_t sys = fr->linkage ? mt_pp_string(&b->str, fr->linkage) : n;
    if (n < 0 || f < 0 || sys < 0)
        return 0;
    uint64_t key = (uint64_t)sys << 32 | (uint64_t)f; /* one linkage name, one function */
    uint64_t id = mt_pp_id_get(&b->fn_ids, key);
    if (id)
        return id;
    if (mt_grow((void **)&b->fns, &b->fns_cap, b->nfns + 1, sizeof *b->fns) != 0)
        return 0;
    mt_pp_function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
    fn.id = b->nfns + 1;
    fn.name = n;
    fn.system_name = sys;
    fn.filename = f;
    if (mt_pp_id_put(&b->fn_ids, key, fn.id) != 0)
        return 0;
    b->fns[b->nfns++] = fn;
    return fn.id;
}

/* Append a Line of frame fr to the location being made; -1 when out of
 * memory. */
static int add_line(mt_pp_builder *b, const mt_frame *fr)
{
    uint64_t fn = function_of(b, fr);
    if (!fn || mt_grow((void **)&b->lines, &b->lines_cap, b->nlines + 1, sizeof *b->lines) != 0)
        return -1;
    mt_pp_line l = PERFTOOLS__PROFILES__LINE__INIT;
    l.function_id = fn;
    l.line = fr->line;
    b->lines[b->nlines++] = l;
    return 0;
}

/* A new Location (lines to be added next); NULL when out of memory. */
static mt_pp_location *new_location(mt_pp_builder *b)
{
    if (mt_grow((void **)&b->locs, &b->locs_cap, b->nlocs + 1, sizeof *b->locs) != 0 ||
        mt_grow((void **)&b->first_line, &b->first_cap, b->nlocs + 1, sizeof *b->first_line) != 0)
        return NULL;
    mt_pp_location l = PERFTOOLS__PROFILES__LOCATION__INIT;
    l.id = b->nlocs + 1;
    b->first_line[b->nlocs] = b->nlines;
    b->locs[b->nlocs] = l;
    return &b->locs[b->nlocs++];
}

/* The key of (m, address) in other_locs, or 0 if it has none (a user-space
 * address fits in 48 bits, a module index in the other 16). */
static uint64_t other_key(const mt_pp_builder *b, const mt_module_info *m, uint64_t address)
{
    uint64_t mi = (uint64_t)(m - b->loc->mods->items) + 1;
    return address >> 48 || mi >> 16 ? 0 : mi << 48 | address;
}

/* A Location like locs[k] (its address, mapping and lines), made anew;
 * its id, or 0 when out of memory. */
static uint64_t copy_location(mt_pp_builder *b, size_t k)
{
    size_t n = b->locs[k].n_line;
    if (mt_grow((void **)&b->lines, &b->lines_cap, b->nlines + n, sizeof *b->lines) != 0)
        return 0;
    mt_pp_location *l = new_location(b);
    if (!l)
        return 0;
    memcpy(&b->lines[b->nlines], &b->lines[b->first_line[k]], n * sizeof *b->lines);
    b->nlines += n;
    l->address = b->locs[k].address;
    l->mapping_id = b->locs[k].mapping_id;
    l->n_line = n;
    return l->id;
}

uint64_t mt_pp_location_of(mt_pp_builder *b, uint64_t address, uint32_t trace)
{
    const mt_module_info *m =
        b->loc->mods ? mt_modules_find_at(b->loc->mods, address, trace) : NULL;
    /* Locations are kept by address for the module that holds it by default;
     * a frame of another one (loaded there before: mt_modules_find_at) gets a
     * Location of its own each time, its lines those of its first one,
     * looked up once per export (other_locs): a plugin replaced by another
     * one at its place leaves many samples with such frames. */
    bool shared = !m || m == mt_modules_find(b->loc->mods, address);
    uint64_t id = shared ? mt_pp_id_get(&b->loc_ids, address) : 0;
    if (id)
        return id;
    uint64_t okey = shared ? 0 : other_key(b, m, address);
    uint64_t first = okey ? mt_pp_id_get(&b->other_locs, okey) : 0;
    if (first)
        return copy_location(b, first - 1);
    mt_frame chain[MT_MAX_CHAIN];
    mt_locator at = mt_locator_at(b->loc, trace);
    unsigned n = mt_locate_all(&at, address, chain, MT_MAX_CHAIN);
    uint64_t map = m ? mapping_of(b, m) : 0;
    mt_pp_location *l = new_location(b);
    if ((m && !map) || !l)
        return 0;
    l->address = address;
    l->mapping_id = map;
    /* innermost first, like chain; an unnamed frame has no Line: pprof
     * then shows its address and module, as the JSON has function null */
    for (unsigned i = 0; i < n; i++) {
        if (!chain[i].function)
            continue;
        if (add_line(b, &chain[i]) != 0)
            return 0;
        l = &b->locs[b->nlocs - 1];
        l->n_line++;
    }
    if (!shared)
        return !okey || mt_pp_id_put(&b->other_locs, okey, l->id) == 0 ? l->id : 0;
    return mt_pp_id_put(&b->loc_ids, address, l->id) == 0 ? l->id : 0;
}

uint64_t mt_pp_pseudo_location(mt_pp_builder *b, const char *name)
{
    mt_pp_location *l = new_location(b);
    if (!l || add_line(b, &(mt_frame){.function = name}) != 0)
        return 0;
    l = &b->locs[b->nlocs - 1];
    l->n_line = 1;
    return l->id;
}

/* An array of pointers to each of the n records at base (the pointer
 * arrays protobuf-c wants); NULL when out of memory. */
#define POINTERS(type, base, n)                                                                    \
    __extension__({                                                                                \
        type **p_ = malloc(((n) ? (n) : 1) * sizeof *p_);                                          \
        for (size_t i_ = 0; p_ && i_ < (n); i_++)                                                  \
            p_[i_] = &(base)[i_];                                                                  \
        p_;                                                                                        \
    })

int mt_pp_finish(mt_pp_builder *b, Perftools__Profiles__Profile *p)
{
    b->loc_ptrs = POINTERS(mt_pp_location, b->locs, b->nlocs);
    b->line_ptrs = POINTERS(mt_pp_line, b->lines, b->nlines);
    b->fn_ptrs = POINTERS(mt_pp_function, b->fns, b->nfns);
    b->map_ptrs = POINTERS(mt_pp_mapping, b->maps, b->nmaps);
    if (!b->loc_ptrs || !b->line_ptrs || !b->fn_ptrs || !b->map_ptrs)
        return -1;
    for (size_t i = 0; i < b->nlocs; i++)
        b->locs[i].line = b->line_ptrs + b->first_line[i];
    p->n_location = b->nlocs;
    p->location = b->loc_ptrs;
    p->n_function = b->nfns;
    p->function = b->fn_ptrs;
    p->n_mapping = b->nmaps;
    p->mapping = b->map_ptrs;
    p->n_string_table = b->str.count;
    p->string_table = b->str.items;
    return 0;
}
