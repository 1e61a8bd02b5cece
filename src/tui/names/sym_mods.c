/* sym_mods.c -- see sym_mods.h: deep copies of mt_modules (items and the
 * lookup index mt_modules_find uses) and their comparison. */
#include "sym_mods.h"

#include <stdlib.h>
#include <string.h>

static void *dup_array(const void *src, size_t n, size_t size)
{
    void *p = malloc(n ? n * size : 1);
    if (p && n)
        memcpy(p, src, n * size);
    return p;
}

mt_symw_mods *mt_symw_mods_copy(const mt_modules *src, uint64_t gen)
{
    mt_symw_mods *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->gen = gen;
    s->refs = 1;
    size_t n = src ? src->count : 0;
    s->map.items = dup_array(n ? src->items : NULL, n, sizeof *s->map.items);
    s->map.order = dup_array(n ? src->order : NULL, n, sizeof *s->map.order);
    s->map.max_end = dup_array(n ? src->max_end : NULL, n, sizeof *s->map.max_end);
    s->map.count = s->map.cap = s->map.index_cap = n;
    s->map.pid = src ? src->pid : 0;
    if (!s->map.items || !s->map.order || !s->map.max_end) {
        mt_symw_mods_free(s);
        return NULL;
    }
    mt_modules_index_holders(&s->map); /* before the worker shares it */
    return s;
}

static size_t build_id_len(const mt_module_info *m)
{
    return m->build_id_len < sizeof m->build_id ? m->build_id_len : sizeof m->build_id;
}

static bool same_module(const mt_module_info *a, const mt_module_info *b)
{
    return a->bias == b->bias && a->start == b->start && a->end == b->end &&
           a->load_seq == b->load_seq && a->unload_seq == b->unload_seq &&
           a->unload_trace == b->unload_trace && a->build_id_len == b->build_id_len &&
           memcmp(a->build_id, b->build_id, build_id_len(a)) == 0 && strcmp(a->path, b->path) == 0;
}

bool mt_symw_mods_same(const mt_symw_mods *s, const mt_modules *src)
{
    if (s->map.count != src->count || s->map.pid != src->pid)
        return false;
    for (size_t i = 0; i < src->count; i++)
        if (!same_module(&s->map.items[i], &src->items[i]))
            return false;
    return true;
}

mt_symw_mods *mt_symw_mods_ref(mt_symw_mods *s)
{
    s->refs++;
    return s;
}

bool mt_symw_mods_unref(mt_symw_mods *s)
{
    return s && --s->refs == 0;
}

void mt_symw_mods_free(mt_symw_mods *s)
{
    if (!s)
        return;
    mt_modules_free(&s->map);
    free(s);
}
