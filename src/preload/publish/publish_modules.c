/* publish_modules.c -- publish the module map: which file is mapped where.
 *
 * Viewers turn an address into (module, offset) and symbolize it from the
 * file, even after the process has exited, so every module ever loaded is
 * kept: dlclose only sets unload_seq.  dl_iterate_phdr's adds/subs
 * counters tell us cheaply whether anything changed since the last scan.
 * Build-ids are read from the PT_NOTE segments in memory (no file I/O).
 * The loader's name of a library dlopen'ed by a relative path is that
 * path ("./libx.so": relative to the working directory of the moment, which
 * the viewer does not know), so such a name is looked up in /proc/self/maps
 * by address: the kernel's absolute name of the file.  Only names with a
 * '/' (the vdso's, linux-vdso.so.1, has none): this runs with the loader's
 * lock held, which a fork must not catch held, so it stays rare.
 * Room for MAX_KNOWN modules is reserved, but only the entries ever used
 * are touched and counted in tracker_bytes (most programs use a few dozen).
 * An unload is stamped with the next trace id (mt_trace_count) read after
 * the walk that found the module gone: every trace into it has a smaller
 * id, and the traces of a library loaded at its place later a larger one
 * (the dlclose hook walks again right after the real dlclose, hook_dl.c,
 * so the stamp is that of the unload).  A module found replaced by another
 * one at its place in the same walk is stamped 0, not known: the other
 * one's traces may have been taken before that walk.
 */
#define _GNU_SOURCE
#include "publish_modules.h"

#include "core_os_memory.h"
#include "core_procinfo.h"
#include "hash_fnv.h"
#include "table_trace.h"

#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#define MAX_KNOWN 4096u

typedef struct {
    uint64_t bias, start, ident;
    int64_t shm_index; /* -1: could not be published */
    int64_t was_index; /* shm_index -2 (unloaded): its last life's record, or -1 */
    uint32_t seen;
} known_module;

struct mt_published_modules {
    mt_module_scan walk;
    uint32_t n;
    uint32_t accounted; /* entries counted in mt_os_bytes: the most ever used */
    known_module known[MAX_KNOWN];
};

typedef struct {
    mt_published_modules *m;
    mt_shm_writer *w;
    uint64_t seq;
    uint32_t at; /* where find_known looks first */
} scan_ctx;

mt_published_modules *mt_modules_new(void)
{
    mt_published_modules *m = mt_os_reserve(sizeof(mt_published_modules));
    if (m)
        mt_os_account((int64_t)offsetof(mt_published_modules, known));
    return m;
}

void mt_modules_reset(mt_published_modules *m)
{
    uint32_t accounted = m->accounted;
    memset(m, 0, offsetof(mt_published_modules, known) + (size_t)m->n * sizeof(known_module));
    m->accounted = accounted;
}

const uint8_t *mt_module_build_id(const struct dl_phdr_info *info, uint32_t *len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz <= MT_BUILD_ID_MAX) {
                *len = nh->n_descsz;
                return desc;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return NULL;
}

static void read_build_id(const struct dl_phdr_info *info, mt_shm_module *out)
{
    uint32_t len = 0;
    const uint8_t *id = mt_module_build_id(info, &len);
    if (id) {
        out->build_id_len = len;
        memcpy(out->build_id, id, len);
    }
}

void mt_module_span(const struct dl_phdr_info *info, uint64_t *start, uint64_t *end)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        lo = a < lo ? a : lo;
        hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
    *start = lo == UINT64_MAX ? 0 : lo;
    *end = hi;
}

void mt_module_describe(const struct dl_phdr_info *info, mt_shm_module *out)
{
    memset(out, 0, sizeof *out);
    out->bias = info->dlpi_addr;
    mt_module_span(info, &out->start, &out->end);
    const char *name = info->dlpi_name;
    if (!name || !*name)
        mt_proc_exe(out->path, sizeof out->path); /* the main program */
    else if (name[0] == '/')
        strncpy(out->path, name, sizeof out->path - 1);
    else if (!strchr(name, '/') || !mt_proc_mapped_file(out->start, out->path, sizeof out->path))
        memcpy(out->path, "[vdso]", 7); /* e.g. linux-vdso.so.1: no file */
    read_build_id(info, out);
}

/* What tells two modules loaded at one address apart: its size and
 * build-id, or, without one, the loader's name of it (fixed for the life
 * of its link map), not the path: a path is read again at each walk and
 * may change under a module that stays -- the main program's from
 * /proc/self/exe gets " (deleted)" when an upgrade replaces its file, a
 * relative dlopen's from /proc/self/maps falls back to "[vdso]" when that
 * cannot be opened (a process at its file limit) -- and a module whose
 * identity changed would be unloaded and loaded again at such a walk. */
static uint64_t module_ident(const struct dl_phdr_info *info, const mt_shm_module *rec)
{
    uint64_t size = rec->end - rec->start;
    uint64_t h = mt_fnv_bytes(MT_FNV_SEED, &size, sizeof size);
    if (rec->build_id_len && rec->build_id_len <= MT_BUILD_ID_MAX)
        return mt_fnv_bytes(h, rec->build_id, rec->build_id_len);
    return mt_fnv_str(h, info->dlpi_name ? info->dlpi_name : "");
}

/* The entry of a module loaded at rec's place (not marked unloaded), if
 * any: rec's module, or another one loaded there before (its ident).
 * There is at most one (a module not found gets an entry, one found is
 * kept or unloaded first: visit), so the order of the search does not
 * matter: it starts after the last entry found (*at), as a walk lists the
 * modules in the order they were first seen: O(modules) a walk, not
 * O(modules^2), when few were loaded or unloaded since the last one. */
static known_module *find_known(mt_published_modules *m, const mt_shm_module *rec, uint32_t *at)
{
    for (uint32_t j = 0; j < m->n; j++) {
        uint32_t i = *at + j < m->n ? *at + j : *at + j - m->n;
        known_module *k = &m->known[i];
        if (k->bias == rec->bias && k->start == rec->start && k->shm_index != -2) {
            *at = i + 1 < m->n ? i + 1 : 0;
            return k;
        }
    }
    return NULL;
}

/* An entry for a newly seen module: a fresh one, or one whose module was
 * unloaded (its record stays in the segment).  shm_index -3 marks it new. */
static known_module *free_entry(mt_published_modules *m)
{
    known_module *k = NULL;
    if (m->n < MAX_KNOWN) {
        k = &m->known[m->n++];
        if (m->n > m->accounted) {
            mt_os_account((int64_t)sizeof *k);
            m->accounted = m->n;
        }
    }
    for (uint32_t i = 0; !k && i < m->n; i++)
        if (m->known[i].shm_index == -2)
            k = &m->known[i];
    if (k)
        k->shm_index = -3;
    return k;
}

/* Marks k's module unloaded in the segment (its record stays);
 * unload_trace: the stamp (see the top), 0 if not known. */
static void unload(known_module *k, mt_shm_writer *w, uint64_t seq, uint32_t unload_trace)
{
    if (k->shm_index >= 0)
        mt_shm_mark_unloaded(w, k->shm_index, seq, unload_trace);
    k->was_index = k->shm_index >= 0 ? k->shm_index : -1;
    k->shm_index = -2; /* a reload at the same place is a new module */
}

/* A module loaded again at the place of its last life (same identity),
 * with no record appended since: that record is marked loaded again.
 * Each life would else be a record of its own (the dlclose hook sees every
 * unload), and a plugin run thousands of times would fill the segment's
 * module area; nothing was loaded meanwhile, so no trace can be in another
 * module at its place. */
static known_module *revive(mt_published_modules *m, mt_shm_writer *w, const mt_shm_module *rec,
                            uint64_t ident)
{
    for (uint32_t i = 0; i < m->n; i++) {
        known_module *k = &m->known[i];
        if (k->shm_index == -2 && k->was_index >= 0 && k->bias == rec->bias &&
            k->start == rec->start && k->ident == ident && mt_shm_revive_module(w, k->was_index)) {
            k->shm_index = k->was_index;
            return k;
        }
    }
    return NULL;
}

static void visit(const mt_shm_module *rec, uint64_t ident, void *arg)
{
    scan_ctx *c = arg;
    known_module *k = find_known(c->m, rec, &c->at);
    if (k && k->ident != ident) {   /* another library where one was: that one is gone */
        unload(k, c->w, c->seq, 0); /* when, between the walks, is not known */
        k = NULL;
    }
    if (!k)
        k = revive(c->m, c->w, rec, ident);
    if (!k)
        k = free_entry(c->m);
    if (k && k->shm_index == -3) {
        k->bias = rec->bias;
        k->start = rec->start;
        k->ident = ident;
        mt_shm_module copy = *rec;
        copy.load_seq = c->seq;
        k->shm_index = mt_shm_append_module(c->w, &copy);
    }
    if (k)
        k->seen = c->m->walk.scan;
}

typedef struct {
    void (*visit)(const mt_shm_module *rec, uint64_t ident, void *arg);
    void *arg;
} walk_ctx;

static int walk_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const walk_ctx *w = arg;
    mt_shm_module rec;
    mt_module_describe(info, &rec);
    if (rec.end != 0) /* nothing mapped */
        w->visit(&rec, module_ident(info, &rec), w->arg);
    return 0;
}

int mt_module_peek_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    unsigned long long *c = arg;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

bool mt_module_scan_run(mt_module_scan *s, int (*iterate)(mt_dl_iter_cb, void *),
                        void (*visit_fn)(const mt_shm_module *rec, uint64_t ident, void *arg),
                        void *arg)
{
    unsigned long long c[2] = {0, 0};
    iterate(mt_module_peek_counts, c);
    if (s->scan && c[0] == s->adds && c[1] == s->subs)
        return false;
    s->adds = c[0];
    s->subs = c[1];
    s->scan++;
    walk_ctx w = {visit_fn, arg};
    iterate(walk_one, &w);
    return true;
}

unsigned long long mt_modules_unloads(const mt_published_modules *m)
{
    return m->walk.subs;
}

void mt_modules_sync(mt_published_modules *m, mt_shm_writer *w, uint64_t publish_seq)
{
    scan_ctx ctx = {m, w, publish_seq, 0};
    if (!mt_module_scan_run(&m->walk, dl_iterate_phdr, visit, &ctx)) /* the publish lock held */
        return;
    uint32_t next_trace = mt_trace_count(); /* after the walk: above every trace into them */
    for (uint32_t i = 0; i < m->n; i++) {
        known_module *k = &m->known[i];
        if (k->seen != m->walk.scan && k->shm_index >= 0)
            unload(k, w, publish_seq, next_trace);
    }
}
