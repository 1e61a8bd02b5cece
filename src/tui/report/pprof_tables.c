/* pprof_tables.c -- see pprof_tables.h: open-addressing hash tables kept
 * at most half full. */
#include "pprof_tables.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "group.h" /* mt_label_hash */
#include "json_escape.h"

#define MIN_SLOTS 256

static uint64_t hash_u64(uint64_t k)
{
    k ^= k >> 33; /* murmur3's finalizer */
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The slot of str in s's slots, or the empty one where it belongs. */
static size_t str_slot(const mt_pp_strings *s, const char *str)
{
    size_t mask = s->nslots - 1, i = (size_t)mt_label_hash(str) & mask;
    while (s->slots[i] && strcmp(s->items[s->slots[i] - 1], str) != 0)
        i = (i + 1) & mask;
    return i;
}

static int str_rehash(mt_pp_strings *s, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    free(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    for (size_t k = 0; k < s->count; k++)
        s->slots[str_slot(s, s->items[k])] = (uint32_t)(k + 1);
    return 0;
}

int mt_pp_strings_init(mt_pp_strings *s)
{
    memset(s, 0, sizeof *s);
    if (mt_grow((void **)&s->items, &s->cap, 1, sizeof *s->items) != 0)
        return -1;
    s->items[0] = strdup("");
    s->count = 1;
    if (!s->items[0] || str_rehash(s, MIN_SLOTS) != 0) {
        mt_pp_strings_free(s);
        return -1;
    }
    return 0;
}

void mt_pp_strings_free(mt_pp_strings *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->items[i]);
    free(s->items);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* str with each byte that is not UTF-8 replaced by U+FFFD, as the JSON
 * export writes it (proto3 strings must be UTF-8); NULL when str is valid
 * already or memory is short (*bad set). */
static char *utf8_clean(const char *str, bool *bad)
{
    const unsigned char *p = (const unsigned char *)str;
    int len;
    while (*p && (len = mt_utf8_len(p)) > 0)
        p += len;
    if (!*p)
        return NULL;
    char *out = malloc(3 * strlen(str) + 1), *o = out;
    *bad = !out;
    for (p = (const unsigned char *)str; out && *p; p += len ? len : 1) {
        len = mt_utf8_len(p);
        memcpy(o, len ? (const char *)p : "\xEF\xBF\xBD", len ? (size_t)len : 3);
        o += len ? len : 3;
    }
    if (out)
        *o = '\0';
    return out;
}

static int64_t intern(mt_pp_strings *s, const char *str);

int64_t mt_pp_string(mt_pp_strings *s, const char *str)
{
    if (!str || !*str)
        return 0;
    bool bad = false;
    char *clean = utf8_clean(str, &bad);
    if (bad)
        return -1;
    int64_t i = intern(s, clean ? clean : str);
    free(clean);
    return i;
}

static int64_t intern(mt_pp_strings *s, const char *str)
{
    size_t i = str_slot(s, str);
    if (s->slots[i])
        return s->slots[i] - 1;
    if (s->count >= UINT32_MAX - 1 ||
        mt_grow((void **)&s->items, &s->cap, s->count + 1, sizeof *s->items) != 0)
        return -1;
    char *copy = strdup(str);
    if (!copy)
        return -1;
    s->items[s->count] = copy;
    s->slots[i] = (uint32_t)++s->count;
    if (2 * s->count > s->nslots && str_rehash(s, 2 * s->nslots) != 0)
        return -1;
    return (int64_t)s->count - 1;
}

void mt_pp_ids_init(mt_pp_ids *m)
{
    memset(m, 0, sizeof *m);
}

void mt_pp_ids_free(mt_pp_ids *m)
{
    free(m->keys);
    free(m->vals);
    mt_pp_ids_init(m);
}

static size_t id_slot(const uint64_t *keys, const uint64_t *vals, size_t cap, uint64_t key)
{
    size_t i = (size_t)hash_u64(key) & (cap - 1);
    while (vals[i] && keys[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

uint64_t mt_pp_id_get(const mt_pp_ids *m, uint64_t key)
{
    return m->cap ? m->vals[id_slot(m->keys, m->vals, m->cap, key)] : 0;
}

static int ids_rehash(mt_pp_ids *m, size_t cap)
{
    uint64_t *keys = calloc(cap, sizeof *keys), *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i]) {
            size_t j = id_slot(keys, vals, cap, m->keys[i]);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int mt_pp_id_put(mt_pp_ids *m, uint64_t key, uint64_t id)
{
    if (2 * (m->used + 1) > m->cap && ids_rehash(m, m->cap ? 2 * m->cap : MIN_SLOTS) != 0)
        return -1;
    size_t i = id_slot(m->keys, m->vals, m->cap, key);
    m->used += !m->vals[i];
    m->keys[i] = key;
    m->vals[i] = id;
    return 0;
}
