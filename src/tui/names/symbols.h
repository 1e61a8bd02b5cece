/* symbols.h -- the viewer's symbolizer: a memtop_symbolize symbolizer and
 * the allocator-plumbing list behind an mt_locator.  One lives as long as
 * the command, so its cache makes later refreshes nearly free. */
#ifndef MEMTOP_SYMBOLS_H
#define MEMTOP_SYMBOLS_H

#include <stdbool.h>

#include "location.h"
#include "plumbing.h"
#include "symbolizer.h"

typedef struct mt_symbols {
    mt_symbolizer *sym; /* NULL with --no-symbols */
    mt_plumbing skip;
} mt_symbols;

/* enabled: false for --no-symbols.  skip_env: MEMTOP_SKIP_FUNCS or NULL.
 * 0, or -1 when out of memory. */
int mt_symbols_init(mt_symbols *s, bool enabled, const char *skip_env);
void mt_symbols_free(mt_symbols *s);

/* A locator over mods that uses s. */
mt_locator mt_symbols_locator(mt_symbols *s, const mt_modules *mods);

#endif
