/* names_cache.c -- per-trace display strings (see names_cache.h). */
#include "names_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mt_name_entry {
    char *text[MT_GROUP_KEYS]; /* one malloc'd block holds all four */
    uint64_t gen;              /* symbolizer generation the strings were made at */
    uint64_t wrap_gen;         /* wrapper set (shape rule) they were made with */
    bool final;
};

void mt_names_init(mt_names *n, mt_symworker *w, const mt_defs *defs)
{
    memset(n, 0, sizeof *n);
    n->w = w;
    n->defs = defs;
}

void mt_names_free(mt_names *n)
{
    for (size_t i = 0; i < n->count; i++)
        free(n->items[i].text[0]);
    free(n->items);
    memset(n, 0, sizeof *n);
}

static mt_name_entry *entry(mt_names *n, uint32_t id)
{
    if (id >= n->count) {
        size_t cap = n->count ? n->count : 1024;
        while (cap <= id)
            cap *= 2;
        mt_name_entry *p = realloc(n->items, cap * sizeof *p);
        if (!p)
            return NULL;
        memset(p + n->count, 0, (cap - n->count) * sizeof *p);
        n->items = p;
        n->count = cap;
    }
    return &n->items[id];
}

/* The four strings of one located frame, in one allocation. */
static bool make_texts(mt_name_entry *e, const mt_frame *f)
{
    char trace[600], func[512], file[512], module[300];
    mt_frame_group_label(f, MT_GROUP_TRACE, trace, sizeof trace);
    mt_frame_group_label(f, MT_GROUP_FUNCTION, func, sizeof func);
    mt_frame_group_label(f, MT_GROUP_FILE, file, sizeof file);
    mt_frame_group_label(f, MT_GROUP_MODULE, module, sizeof module);
    const char *parts[MT_GROUP_KEYS] = {trace, func, file, module};
    size_t len[MT_GROUP_KEYS], total = 0;
    for (int g = 0; g < MT_GROUP_KEYS; g++)
        total += (len[g] = strlen(parts[g])) + 1;
    char *block = malloc(total);
    if (!block)
        return false;
    free(e->text[0]);
    for (int g = 0; g < MT_GROUP_KEYS; g++) {
        memcpy(block, parts[g], len[g] + 1);
        e->text[g] = block;
        block += len[g] + 1;
    }
    return true;
}

/* Bring e up to date if the symbolizer learnt something since. */
static void refresh(mt_names *n, uint32_t id, mt_name_entry *e)
{
    uint64_t gen = mt_symworker_generation(n->w), wrap_gen = mt_symworker_wrappers_gen(n->w);
    if ((e->final && e->wrap_gen == wrap_gen) || (e->text[0] && e->gen == gen))
        return;
    unsigned nf;
    const uint64_t *frames = mt_defs_frames(n->defs, id, &nf);
    if (!frames || !nf)
        return;
    mt_frame f;
    bool final = mt_symworker_location(n->w, id, frames, nf, &f);
    if (make_texts(e, &f)) {
        e->final = final;
        e->gen = gen;
        e->wrap_gen = wrap_gen;
    }
}

const char *mt_names_get(mt_names *n, uint32_t id, mt_group_key g)
{
    if (id == 0) {
        unsigned nf;
        mt_defs_frames(n->defs, 0, &nf);
        if (!nf)
            return "(overflow)"; /* backtraces without a trace of their own */
    }
    mt_name_entry *e = entry(n, id);
    if (!e)
        return "?";
    refresh(n, id, e);
    return e->text[0] && (unsigned)g < MT_GROUP_KEYS ? e->text[g] : "?";
}

bool mt_names_frame(mt_names *n, uint32_t id, mt_frame *out)
{
    unsigned nf;
    const uint64_t *frames = mt_defs_frames(n->defs, id, &nf);
    if (!frames || !nf)
        return false;
    return mt_symworker_location(n->w, id, frames, nf, out);
}

void mt_names_prioritize(mt_names *n, uint32_t id)
{
    mt_name_entry *e = id < n->count ? &n->items[id] : NULL;
    mt_frame f;
    if (e && !e->final)
        mt_names_frame(n, id, &f);
}

static const char *namer_fn(void *ctx, uint32_t id, mt_group_key g)
{
    return mt_names_get(ctx, id, g);
}

mt_namer mt_names_namer(mt_names *n)
{
    return (mt_namer){namer_fn, n};
}
