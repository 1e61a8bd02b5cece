/* wrapper_shape.c -- the shape rule for allocator wrappers (see
 * wrapper_shape.h): rounds over the traces, each finding the wrappers one
 * level further out. */
#include "wrapper_shape.h"

#include <stdlib.h>
#include <string.h>

#include "group.h"

/* What the rule needs of one frame address. */
typedef struct frame_facts {
    bool alloc;   /* every source frame at it is plumbing (lists, name rule, wrappers found) */
    bool kept;    /* a "!name" keeps one of its functions */
    bool named;   /* its function is known */
    uint64_t key; /* the function (hash of its name), else the address */
    const char *module;
} frame_facts;

/* One candidate: the first frame of a trace past the known plumbing. */
typedef struct shape_site {
    uint64_t addr, caller, size; /* size: mean block size, 0 = unknown */
    bool inner;                  /* unnamed, and its caller is plumbing of its module */
} shape_site;

static void facts(const mt_locator *loc, uint64_t addr, frame_facts *f)
{
    mt_frame chain[MT_MAX_CHAIN];
    unsigned k = mt_locate_all(loc, addr, chain, MT_MAX_CHAIN);
    const mt_frame *outer = &chain[k - 1]; /* the function the others are inlined into */
    f->named = outer->function != NULL;
    f->key = f->named ? mt_label_hash(outer->function) : addr;
    f->module = outer->module;
    f->alloc = true;
    f->kept = false;
    for (unsigned j = 0; j < k; j++) {
        f->alloc = f->alloc && mt_frame_is_plumbing(loc, addr, &chain[j]);
        f->kept = f->kept || (loc->skip && mt_plumbing_kept(loc->skip, chain[j].function));
    }
}

static bool same_module(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The candidate of trace frames[0..n-1] from *pos on (advanced past the
 * plumbing); false when the trace has none (all plumbing, or kept). */
static bool candidate(const mt_locator *loc, const uint64_t *frames, unsigned n, unsigned *pos,
                      shape_site *s)
{
    frame_facts f = {0}, c;
    unsigned p = *pos;
    for (; p < n; p++) {
        facts(loc, frames[p], &f);
        if (!f.alloc)
            break;
    }
    *pos = p;
    if (p >= n || f.kept)
        return false;
    s->addr = frames[p];
    s->caller = 0; /* no caller frame: the outermost */
    s->inner = false;
    if (p + 1 < n) {
        facts(loc, frames[p + 1], &c);
        s->caller = c.key;
        s->inner = !f.named && c.alloc && same_module(f.module, c.module);
    }
    return true;
}

static int cmp_site(const void *a, const void *b)
{
    const shape_site *x = a, *y = b;
    if (x->addr != y->addr)
        return (x->addr > y->addr) - (x->addr < y->addr);
    return (x->caller > y->caller) - (x->caller < y->caller);
}

/* Is the group s[0..n-1] (one address, sorted by caller) a wrapper? */
static bool is_wrapper(const shape_site *s, size_t n)
{
    size_t callers = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    bool inner = false;
    for (size_t i = 0; i < n; i++) {
        callers += i == 0 || s[i].caller != s[i - 1].caller;
        if (s[i].size && s[i].size < lo)
            lo = s[i].size;
        if (s[i].size > hi)
            hi = s[i].size;
        inner = inner || s[i].inner;
    }
    return inner || (callers >= MT_SHAPE_MIN_CALLERS && hi && lo != hi);
}

/* Adds the wrappers among sites (sorted here); how many, or -1 (memory). */
static long add_wrappers(shape_site *sites, size_t n, mt_addr_set *out)
{
    qsort(sites, n, sizeof *sites, cmp_site);
    long added = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && sites[j].addr == sites[i].addr;)
            j++;
        if (!is_wrapper(&sites[i], j - i))
            continue;
        if (!mt_addr_set_add(out, sites[i].addr))
            return -1;
        added++;
    }
    mt_addr_set_seal(out);
    return added;
}

/* Each trace's mean block size, by id (0: unknown); NULL (memory). */
static uint64_t *mean_sizes(const mt_defs *defs, const mt_snapshot *snap)
{
    uint64_t *sz = calloc(defs->count ? defs->count : 1, sizeof *sz);
    for (size_t i = 0; sz && snap && snap->traces && i < snap->slot.ntraces; i++) {
        const mt_shm_trace *t = &snap->traces[i];
        if (t->id < defs->count && t->alloc_count)
            sz[t->id] = t->alloc_bytes / t->alloc_count;
    }
    return sz;
}

/* The rule over defs with sizes[id] (see mt_wrapper_shape). */
static int shape(const mt_locator *loc, const mt_defs *defs, const uint64_t *sizes,
                 mt_addr_set *out)
{
    mt_locator l = *loc;
    l.wrappers = out;
    mt_addr_set_seal(out);
    size_t cap = defs->count ? defs->count : 1;
    unsigned *pos = calloc(cap, sizeof *pos);
    shape_site *sites = malloc(cap * sizeof *sites);
    long added = pos && sites ? 1 : -1;
    for (unsigned r = 0; r < MT_SHAPE_ROUNDS && added > 0; r++) {
        size_t n = 0;
        for (uint32_t id = 0; id < defs->count; id++) {
            unsigned nf = 0;
            const uint64_t *frames = mt_defs_frames(defs, id, &nf);
            mt_locator at = mt_locator_at(&l, id); /* its frames' modules when it was taken */
            if (frames && candidate(&at, frames, nf, &pos[id], &sites[n])) {
                sites[n].size = sizes[id];
                n++;
            }
        }
        added = add_wrappers(sites, n, out);
    }
    free(pos);
    free(sites);
    return added < 0 ? -1 : 0;
}

int mt_wrapper_shape(const mt_locator *loc, const mt_defs *defs, const mt_snapshot *snap,
                     mt_addr_set *out)
{
    uint64_t *sizes = mean_sizes(defs, snap);
    int rc = sizes ? shape(loc, defs, sizes, out) : -1;
    free(sizes);
    return rc;
}

mt_locator mt_wrapper_locator(const mt_locator *loc, const mt_defs *defs, const mt_snapshot *snap,
                              mt_addr_set *set)
{
    mt_locator l = *loc;
    mt_addr_set_init(set);
    (void)mt_wrapper_shape(loc, defs, snap, set);
    l.wrappers = set;
    return l;
}

struct mt_shape_job {
    mt_defs defs; /* each trace's first MT_SHAPE_JOB_FRAMES frames */
    uint64_t *sizes;
};

mt_shape_job *mt_shape_job_new(const mt_defs *defs, const mt_snapshot *snap)
{
    mt_shape_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    mt_defs_init(&j->defs);
    j->sizes = mean_sizes(defs, snap);
    bool ok = j->sizes != NULL;
    for (uint32_t id = 0; ok && id < defs->count; id++) {
        mt_def_info info = defs->items[id];
        unsigned nf = 0;
        const uint64_t *frames = mt_defs_frames(defs, id, &nf);
        info.nframes = (uint16_t)(nf < MT_SHAPE_JOB_FRAMES ? nf : MT_SHAPE_JOB_FRAMES);
        mt_err err;
        ok = mt_defs_push(&j->defs, &info, frames, &err) == MT_OK;
    }
    if (!ok) {
        mt_shape_job_free(j);
        return NULL;
    }
    return j;
}

int mt_shape_job_run(void *job, const mt_locator *loc, mt_addr_set *out)
{
    mt_shape_job *j = job;
    return shape(loc, &j->defs, j->sizes, out);
}

void mt_shape_job_free(void *job)
{
    mt_shape_job *j = job;
    if (!j)
        return;
    mt_defs_free(&j->defs);
    free(j->sizes);
    free(j);
}
