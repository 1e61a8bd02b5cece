/* location.h -- turning a frame address into something a person can use.
 *
 * Today: the module and the offset inside it (addr - bias).  The
 * symbolizer (a later issue) plugs in through mt_locator.symbolize and
 * fills function/file/line; every output format goes through mt_locate. */
#ifndef MEMTOP_LOCATION_H
#define MEMTOP_LOCATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtop_ipc.h"

typedef struct mt_frame {
    uint64_t address;
    const char *module;          /* path, or NULL if no module contains address */
    uint64_t offset;             /* address - module bias */
    const char *function, *file; /* NULL until symbolized */
    unsigned line;               /* 0 = unknown */
    bool inlined;
} mt_frame;

/* Fills function/file/line/inlined of f for module m; false if unknown. */
typedef bool (*mt_symbolize_fn)(void *ctx, const mt_module_info *m, mt_frame *f);

typedef struct mt_locator {
    const mt_modules *mods;
    mt_symbolize_fn symbolize; /* NULL: no symbolizer yet */
    void *ctx;
} mt_locator;

void mt_locate(const mt_locator *loc, uint64_t address, mt_frame *out);

/* "libfoo.so+0x1a2b" (module base name), "func (libfoo.so+0x1a2b)" once
 * symbolized, or "0x7f..." without a module. */
char *mt_frame_short(const mt_frame *f, char *buf, size_t n);

#endif
