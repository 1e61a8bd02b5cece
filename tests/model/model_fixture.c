/* model_fixture.c -- in-memory snapshots and a namer for the model tests. */
#include "model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mt_snapshot *fx_snap(size_t n, double t_s)
{
    mt_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    s->slot.ntraces = n;
    s->slot.t_ns = (uint64_t)(t_s * 1e9);
    s->traces = n ? calloc(n, sizeof *s->traces) : NULL;
    if (n && !s->traces)
        abort();
    for (size_t i = 0; i < n; i++) {
        s->traces[i].id = (uint32_t)i;
        s->traces[i].oldest_birth_ns = MT_UNKNOWN;
    }
    return s;
}

void fx_snap_free(mt_snapshot *s)
{
    if (!s)
        return;
    free(s->traces);
    free(s);
}

void fx_trace(mt_snapshot *s, size_t i, uint64_t allocs, uint64_t alloc_bytes, uint64_t frees,
              uint64_t free_bytes)
{
    mt_shm_trace *t = &s->traces[i];
    t->alloc_count = allocs;
    t->alloc_bytes = alloc_bytes;
    t->free_count = frees;
    t->free_bytes = free_bytes;
    t->live_count = allocs - frees;
    t->live_bytes = alloc_bytes - free_bytes;
    t->peak_live_bytes = t->live_bytes;
}

/* The kept TRACE string of id, replaced if it no longer reads as buf. */
static const char *keep_trace(fx_names *n, uint32_t id)
{
    if (id >= n->ntrace) {
        size_t cap = n->ntrace ? n->ntrace : 64;
        while (cap <= id)
            cap *= 2;
        char **p = realloc(n->trace, cap * sizeof *p);
        if (!p)
            abort();
        memset(p + n->ntrace, 0, (cap - n->ntrace) * sizeof *p);
        n->trace = p;
        n->ntrace = cap;
    }
    if (!n->trace[id] || strcmp(n->trace[id], n->buf) != 0) {
        free(n->trace[id]);
        if (!(n->trace[id] = strdup(n->buf)))
            abort();
    }
    return n->trace[id];
}

static const char *fx_name(void *ctx, uint32_t id, mt_group_key g)
{
    fx_names *n = ctx;
    const char *func = n->func[id % n->nfunc];
    const char *file = n->file[id % n->nfile];
    n->calls++;
    switch (g) {
    case MT_GROUP_FUNCTION:
        return func;
    case MT_GROUP_FILE:
        return file;
    case MT_GROUP_MODULE:
        return n->module[id % n->nmodule];
    default:
        snprintf(n->buf, sizeof n->buf, "%s (%s:%u)", func, file, (unsigned)id);
        return keep_trace(n, id);
    }
}

mt_namer fx_namer(fx_names *names)
{
    return (mt_namer){fx_name, names};
}

void fx_names_free(fx_names *names)
{
    for (size_t i = 0; i < names->ntrace; i++)
        free(names->trace[i]);
    free(names->trace);
    names->trace = NULL;
    names->ntrace = 0;
}
