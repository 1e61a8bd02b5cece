/* location.h -- turning a frame address into something a person can use.
 *
 * mt_locate_all gives the module and the offset inside it (addr - bias)
 * and, through the symbolizer hook (mt_locator.symbolize, see symbols.h),
 * the function, file and line, with one frame per inlined function in
 * front of the function it was inlined into.  Every output format goes
 * through here.  mt_trace_location picks the frame shown for a trace: the
 * first one that is not allocator plumbing. */
#ifndef MEMTOP_LOCATION_H
#define MEMTOP_LOCATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr_set.h"
#include "cli_options.h"
#include "memtop_ipc.h"
#include "plumbing.h"

#define MT_MAX_CHAIN 64 /* source frames per address (inlining depth) */

typedef struct mt_frame {
    uint64_t address;
    const char *module;          /* path, or NULL if no module contains address */
    uint64_t offset;             /* address - module bias */
    const char *function, *file; /* NULL until symbolized */
    const char *linkage;         /* function's mangled name, or NULL (mt_sym_frame) */
    unsigned line;               /* 0 = unknown */
    bool inlined;                /* inlined into the next frame of the chain */
    const char *unresolved;      /* why function is NULL after symbolizing, or NULL */
} mt_frame;

/* Called with f[0] located (address, module, offset) in module m of
 * process pid (mt_modules.pid, 0: none); fills f[0..n-1]
 * (innermost inlined function first, each a copy of f[0] with its own
 * function/file/line/inlined) and returns n, 1 <= n <= max. */
typedef unsigned (*mt_symbolize_fn)(void *ctx, const mt_module_info *m, int pid, mt_frame *f,
                                    unsigned max);

typedef struct mt_locator {
    const mt_modules *mods;
    mt_symbolize_fn symbolize; /* NULL: module + offset only (--no-symbols) */
    void *ctx;
    const mt_plumbing *skip;     /* NULL: no frame is plumbing */
    const mt_addr_set *wrappers; /* the shape rule's wrapper call sites, or NULL */
    uint32_t trace; /* the trace whose frames are looked up (mt_modules_find_at); 0: any */
} mt_locator;

/* loc for the frames of trace id: an address two modules held in turn
 * (a plugin unloaded, another loaded at its place) is named from the one
 * that held it when the trace was taken. */
static inline mt_locator mt_locator_at(const mt_locator *loc, uint32_t id)
{
    mt_locator l = *loc;
    l.trace = id;
    return l;
}

/* The source frames at address (at least 1, at most max >= 1). */
/* Is source frame f, at address addr, allocator plumbing for loc? */
bool mt_frame_is_plumbing(const mt_locator *loc, uint64_t addr, const mt_frame *f);

unsigned mt_locate_all(const mt_locator *loc, uint64_t address, mt_frame *out, unsigned max);

/* The innermost source frame at address. */
void mt_locate(const mt_locator *loc, uint64_t address, mt_frame *out);

/* The frame shown for a trace: the first source frame, innermost first,
 * whose function is not allocator plumbing (by loc->skip, or by shape: its
 * address is in loc->wrappers and no "!name" keeps it).  If every frame is
 * plumbing, the outermost source frame of the outermost machine frame (see
 * mt_trace_site).  n must be at least 1. */
void mt_trace_location(const mt_locator *loc, const uint64_t *frames, unsigned n, mt_frame *out);

/* mt_trace_location, and where the frame is: frames[*at], source frame
 * *inner of that address's chain (mt_locate_all).  Returns false when every
 * frame is plumbing (out is then the outermost frame's outermost source
 * frame, *at = n - 1). */
bool mt_trace_site(const mt_locator *loc, const uint64_t *frames, unsigned n, mt_frame *out,
                   unsigned *at, unsigned *inner);

/* "func (file.c:12)", "func (libfoo.so+0x1a2b)", "libfoo.so+0x1a2b [reason]"
 * (module base name), or "0x7f..." without a module. */
char *mt_frame_short(const mt_frame *f, char *buf, size_t n);

/* The label of f under grouping g (the viewer's rows and `--batch -g`):
 * TRACE: mt_frame_short; FUNCTION: the function, else "libfoo.so+0x1a2b";
 * FILE: the source file, else "libfoo.so (no source)"; MODULE: the module's
 * base name, else "[unknown]". */
char *mt_frame_group_label(const mt_frame *f, mt_group_key g, char *buf, size_t n);

#endif
