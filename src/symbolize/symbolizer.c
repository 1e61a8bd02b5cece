/* symbolizer.c -- the public API (see symbolizer.h): module table, result
 * cache, and turning libdw's raw frames into demangled, owned results. */
#include "symbolizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "demangle.h"
#include "inline_frames.h"
#include "module_table.h"

struct mt_symbolizer {
    mt_module_table modules;
    mt_sym_cache cache;
    uint64_t hits, misses;
    mt_sym_result oom; /* answer when memory runs out */
    mt_sym_frame oom_frame;
};

mt_symbolizer *mt_symbolizer_new(void)
{
    mt_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    mt_module_table_init(&s->modules);
    mt_sym_cache_init(&s->cache);
    s->oom = (mt_sym_result){&s->oom_frame, 1, "out of memory"};
    return s;
}

void mt_symbolizer_free(mt_symbolizer *s)
{
    if (!s)
        return;
    mt_sym_cache_free(&s->cache);
    mt_module_table_free(&s->modules);
    free(s);
}

void mt_symbolizer_stats(const mt_symbolizer *s, uint64_t *hits, uint64_t *misses)
{
    *hits = s->hits;
    *misses = s->misses;
}

void mt_symbolizer_cancel(mt_symbolizer *s)
{
    mt_debuginfod_cancel(&s->modules.debuginfod);
}

static mt_sym_result *unresolved(const char *why)
{
    mt_sym_result *r = mt_sym_result_new(1);
    if (r)
        r->unresolved = why;
    return r;
}

/* dir/file, or a copy of file; NULL if out of memory. */
static char *join(const char *dir, const char *file)
{
    if (!dir)
        return strdup(file);
    char *out = NULL;
    return asprintf(&out, "%s/%s", dir, file) < 0 ? NULL : out;
}

/* Owned, demangled copies of raw's strings; NULL if out of memory. */
static mt_sym_result *own(const mt_raw_frame *raw, unsigned n)
{
    mt_sym_result *r = mt_sym_result_new(n);
    if (!r)
        return NULL;
    mt_sym_frame *f = (mt_sym_frame *)r->frames;
    bool ok = true;
    for (unsigned i = 0; i < n; i++) {
        f[i].function = raw[i].name ? mt_demangle(raw[i].name) : NULL;
        if (f[i].function && strcmp(f[i].function, raw[i].name) != 0)
            ok = ok && (f[i].linkage = strdup(raw[i].name)) != NULL;
        f[i].file = raw[i].file ? join(raw[i].dir, raw[i].file) : NULL;
        f[i].line = raw[i].line;
        f[i].inlined = raw[i].inlined;
        ok = ok && (!raw[i].name || f[i].function) && (!raw[i].file || f[i].file);
    }
    if (!f[0].function)
        r->unresolved = "no symbols";
    if (!ok) {
        mt_sym_result_free(r);
        return NULL;
    }
    return r;
}

static mt_sym_result *resolve(mt_sym_modfile *mf, uint64_t offset)
{
    if (!mf->session.mod)
        return unresolved(mf->session.unresolved ? mf->session.unresolved
                                                 : mt_dwfl_no_symbols(&mf->session));
    mt_raw_frame raw[MT_MAX_INLINE];
    unsigned n = mt_inline_frames(mf->session.mod, &mf->session.scopes, mf->session.symtab_only,
                                  offset, raw, MT_MAX_INLINE);
    mt_sym_result *r = n ? own(raw, n) : unresolved("no symbols");
    if (r && !r->frames[0].function)
        r->unresolved = mt_dwfl_no_symbols(&mf->session);
    return r;
}

const mt_sym_result *mt_symbolize(mt_symbolizer *s, const mt_sym_module *m, uint64_t offset)
{
    uint32_t mod = mt_module_table_get(&s->modules, m);
    if (!mod)
        return &s->oom;
    mt_sym_result *r = mt_sym_cache_get(&s->cache, mod, offset);
    if (r) {
        s->hits++;
        return r;
    }
    s->misses++;
    r = resolve(&s->modules.items[mod - 1], offset);
    if (!r || !mt_sym_cache_put(&s->cache, mod, offset, r))
        return &s->oom;
    return r;
}
