/* module_table.c -- see module_table.h. */
#include "module_table.h"
#include "hash_fnv.h"

#include <stdlib.h>
#include <string.h>

void mt_module_table_init(mt_module_table *t)
{
    memset(t, 0, sizeof *t);
    mt_debuginfod_init(&t->debuginfod);
}

void mt_module_table_free(mt_module_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        mt_dwfl_free(&t->items[i].session);
        free(t->items[i].path);
    }
    free(t->items);
    free(t->index);
    mt_module_table_init(t);
}

static size_t hash(const mt_sym_module *m)
{
    return (size_t)mt_fnv_bytes(mt_fnv_str(MT_FNV_SEED, m->path), m->build_id, m->build_id_len);
}

static bool same(const mt_sym_modfile *f, const mt_sym_module *m)
{
    return f->build_id_len == m->build_id_len &&
           memcmp(f->build_id, m->build_id, m->build_id_len) == 0 && strcmp(f->path, m->path) == 0;
}

static uint32_t *index_slot(const mt_module_table *t, uint32_t *index, size_t cap,
                            const mt_sym_module *m)
{
    size_t i = hash(m) & (cap - 1);
    while (index[i] && !same(&t->items[index[i] - 1], m))
        i = (i + 1) & (cap - 1);
    return &index[i];
}

static bool reserve(mt_module_table *t)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        mt_sym_modfile *items = realloc(t->items, cap * sizeof *items);
        if (!items)
            return false;
        t->items = items;
        t->cap = cap;
    }
    if ((t->count + 1) * 2 <= t->index_cap)
        return true;
    size_t cap = t->index_cap ? t->index_cap * 2 : 64;
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index)
        return false;
    for (size_t i = 0; i < t->count; i++) {
        const mt_sym_modfile *f = &t->items[i];
        mt_sym_module key = {
            .path = f->path, .build_id = f->build_id, .build_id_len = f->build_id_len};
        *index_slot(t, index, cap, &key) = (uint32_t)i + 1;
    }
    free(t->index);
    t->index = index;
    t->index_cap = cap;
    return true;
}

static uint32_t add(mt_module_table *t, const mt_sym_module *m)
{
    if (!reserve(t))
        return 0;
    mt_sym_modfile *f = &t->items[t->count];
    memset(f, 0, sizeof *f);
    f->path = strdup(m->path);
    if (!f->path)
        return 0;
    f->build_id_len = m->build_id_len;
    memcpy(f->build_id, m->build_id, m->build_id_len);
    mt_sym_module open = *m;
    open.path = f->path;
    mt_dwfl_open(&f->session, &open, &t->debuginfod);
    *index_slot(t, t->index, t->index_cap, m) = (uint32_t)++t->count;
    return (uint32_t)t->count;
}

uint32_t mt_module_table_get(mt_module_table *t, const mt_sym_module *m)
{
    mt_sym_module key = *m;
    if (!key.path)
        key.path = "";
    if (key.build_id_len > sizeof t->items[0].build_id || !key.build_id)
        key.build_id_len = 0; /* cannot be checked */
    if (!key.build_id_len)
        key.build_id = (const uint8_t *)"";
    if (t->last && same(&t->items[t->last - 1], &key))
        return (uint32_t)t->last;
    uint32_t *slot = t->index ? index_slot(t, t->index, t->index_cap, &key) : NULL;
    uint32_t n = slot && *slot ? *slot : add(t, &key);
    t->last = n;
    return n;
}
