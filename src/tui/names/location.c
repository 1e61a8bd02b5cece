/* location.c -- address -> module + offset, with the symbolizer hook and
 * the choice of a trace's location (see location.h). */
#include "location.h"

#include "format.h"

#include <stdio.h>
#include <string.h>

unsigned mt_locate_all(const mt_locator *loc, uint64_t address, mt_frame *out, unsigned max)
{
    memset(out, 0, sizeof *out);
    out->address = address;
    const mt_module_info *m = loc->mods ? mt_modules_find_at(loc->mods, address, loc->trace) : NULL;
    if (!m)
        return 1;
    out->module = m->path;
    out->offset = address - m->bias;
    if (!loc->symbolize)
        return 1;
    unsigned n = loc->symbolize(loc->ctx, m, loc->mods->pid, out, max);
    return n >= 1 && n <= max ? n : 1;
}

void mt_locate(const mt_locator *loc, uint64_t address, mt_frame *out)
{
    mt_locate_all(loc, address, out, 1);
}

/* A frame of the C++ standard library's headers (libstdc++'s
 * /usr/include/c++/12/..., libc++'s .../include/c++/v1/...): an inlined
 * member's DWARF name is unqualified ("_M_realloc_insert<...>",
 * "thread<...>"), so the "std::" entry cannot see it.  The library's own
 * sources (libstdc++-v3/..., libcxx/...: its debug symbols) are its. */
static bool in_cxx_library_header(const mt_frame *f)
{
    return f->file && (strstr(f->file, "/include/c++/") || strstr(f->file, "libstdc++-v3/") ||
                       strstr(f->file, "/libcxx/"));
}

/* A frame of Rust's standard library ("/rustc/<commit>/library/std/src/
 * collections/hash/map.rs"): "HashMap<K,V,S,A>::insert" names generic
 * parameters, not a program's types. */
static bool in_rust_library_source(const mt_frame *f)
{
    return strncmp(f->file, "/rustc/", 7) == 0 || strstr(f->file, "/library/std/src/") ||
           strstr(f->file, "/library/core/src/") || strstr(f->file, "/library/alloc/src/");
}

/* A standard class template's member that the program specialised for a
 * type of its own ("std::hash<MyKey>::operator()" written in its source):
 * the "std::" entry takes it by name, its file says it is the program's. */
static bool program_specialisation(const mt_locator *loc, const mt_frame *f)
{
    return f->file && !in_cxx_library_header(f) && !in_rust_library_source(f) &&
           mt_plumbing_std_specialisation(loc->skip, f->function);
}

bool mt_frame_is_plumbing(const mt_locator *loc, uint64_t addr, const mt_frame *f)
{
    if (loc->skip && mt_plumbing_match(loc->skip, f->function))
        return !program_specialisation(loc, f);
    bool kept = loc->skip && mt_plumbing_kept(loc->skip, f->function);
    return !kept &&
           ((loc->skip && in_cxx_library_header(f)) || mt_addr_set_has(loc->wrappers, addr));
}

/* A trace whose every frame is plumbing shows its outermost frame's
 * outermost function.  A whole trace ends in code that is no plumbing
 * (_start, main, clone, a thread's start routine), so such a trace was cut
 * short: by the depth limit, or by an unwinder that stopped inside a
 * library.  Its innermost frame is the allocator itself ("operator new"),
 * the same for every such row; its outermost one is the nearest to the code
 * that asked, as the location of a whole trace is the first frame out of
 * the plumbing (a standard-library member that was running, a program's
 * own "std::vector<Item>::_M_realloc_insert"). */
bool mt_trace_site(const mt_locator *loc, const uint64_t *frames, unsigned n, mt_frame *out,
                   unsigned *at, unsigned *inner)
{
    mt_frame chain[MT_MAX_CHAIN];
    unsigned k = 1;
    for (unsigned i = 0; i < n; i++) {
        k = mt_locate_all(loc, frames[i], chain, MT_MAX_CHAIN);
        for (unsigned j = 0; j < k; j++) {
            if (!mt_frame_is_plumbing(loc, frames[i], &chain[j])) {
                *out = chain[j];
                *at = i;
                *inner = j;
                return true;
            }
        }
    }
    *out = chain[k - 1]; /* the outermost frame's chain, from the loop's last turn */
    *at = n - 1;
    *inner = k - 1;
    return false;
}

void mt_trace_location(const mt_locator *loc, const uint64_t *frames, unsigned n, mt_frame *out)
{
    unsigned at, inner;
    mt_trace_site(loc, frames, n, out, &at, &inner);
}

char *mt_frame_short(const mt_frame *f, char *buf, size_t n)
{
    unsigned long long off = (unsigned long long)f->offset;
    if (!f->module)
        snprintf(buf, n, "0x%llx", (unsigned long long)f->address);
    else if (f->function && f->file && f->line)
        snprintf(buf, n, "%s (%s:%u)", f->function, mt_path_base(f->file), f->line);
    else if (f->function)
        snprintf(buf, n, "%s (%s+0x%llx)", f->function, mt_path_base(f->module), off);
    else if (f->unresolved)
        snprintf(buf, n, "%s+0x%llx [%s]", mt_path_base(f->module), off, f->unresolved);
    else
        snprintf(buf, n, "%s+0x%llx", mt_path_base(f->module), off);
    return mt_fmt_sanitize(buf);
}

char *mt_frame_group_label(const mt_frame *f, mt_group_key g, char *buf, size_t n)
{
    const char *mod = f->module ? mt_path_base(f->module) : "[unknown]";
    unsigned long long off = (unsigned long long)f->offset;
    if (g == MT_GROUP_FUNCTION && f->function)
        snprintf(buf, n, "%s", f->function);
    else if (g == MT_GROUP_FUNCTION)
        snprintf(buf, n, "%s+0x%llx", mod, off);
    else if (g == MT_GROUP_FILE && f->file)
        snprintf(buf, n, "%s", f->file);
    else if (g == MT_GROUP_FILE)
        snprintf(buf, n, "%s (no source)", mod);
    else if (g == MT_GROUP_MODULE)
        snprintf(buf, n, "%s", mod);
    else
        return mt_frame_short(f, buf, n);
    return buf;
}
