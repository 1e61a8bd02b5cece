/* symbols.c -- see symbols.h: adapts mt_symbolize's results to the
 * locator's frames. */
#include "symbols.h"

#include <string.h>

static unsigned symbolize(void *ctx, const mt_module_info *m, int pid, mt_frame *f, unsigned max)
{
    mt_symbols *s = ctx;
    unsigned len = m->build_id_len <= MT_BUILD_ID_MAX ? m->build_id_len : 0;
    mt_sym_module mod = {m->path, m->build_id, len, pid, m->start, m->end};
    const mt_sym_result *r = mt_symbolize(s->sym, &mod, f->offset);
    unsigned n = r->nframes < max ? r->nframes : max;
    for (unsigned i = 0; i < n; i++) {
        f[i] = f[0];
        f[i].function = r->frames[i].function;
        f[i].linkage = r->frames[i].linkage;
        f[i].file = r->frames[i].file;
        f[i].line = r->frames[i].line;
        f[i].inlined = r->frames[i].inlined;
        f[i].unresolved = f[i].function ? NULL : r->unresolved;
    }
    return n;
}

int mt_symbols_init(mt_symbols *s, bool enabled, const char *skip_env)
{
    memset(s, 0, sizeof *s);
    if (!mt_plumbing_init(&s->skip, skip_env))
        return -1;
    if (enabled && !(s->sym = mt_symbolizer_new())) {
        mt_plumbing_free(&s->skip);
        return -1;
    }
    return 0;
}

void mt_symbols_free(mt_symbols *s)
{
    mt_symbolizer_free(s->sym);
    mt_plumbing_free(&s->skip);
    s->sym = NULL;
}

mt_locator mt_symbols_locator(mt_symbols *s, const mt_modules *mods)
{
    return (mt_locator){mods, s->sym ? symbolize : NULL, s, &s->skip, NULL, 0};
}
