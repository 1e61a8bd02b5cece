/* seg_builder.c -- synthetic segments for tests (see seg_builder.h). */
#include "seg_builder.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MOD_START 0x400000ull
#define MOD_STRIDE 0x100000ull
#define MOD_SIZE 0x80000ull
#define MOD_BIAS_DELTA 0x1000ull

uint64_t sb_module_start(unsigned i)
{
    return MOD_START + i * MOD_STRIDE;
}

uint64_t sb_module_bias(unsigned i)
{
    return sb_module_start(i) - MOD_BIAS_DELTA;
}

void sb_default_spec(sb_spec *s)
{
    memset(s, 0, sizeof *s);
    s->pid = (int)getpid();
    s->ntraces = 8;
    s->nframes = 4;
    s->nmodules = 3;
    s->ntimeline = 4;
    s->defs_cap = 8192;
    s->modules_cap = 8 * sizeof(mt_shm_module);
    s->slot_cap = 8192;
}

/* Field 22 of /proc/<pid>/stat, or 1 if there is no such process. */
static uint64_t start_ticks(int pid)
{
    char buf[2048], path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 1;
}

mt_shm_header *sb_header(const sb_seg *seg)
{
    return (mt_shm_header *)seg->buf;
}

static void fill_header(sb_seg *seg, const sb_spec *sp)
{
    mt_shm_header *h = sb_header(seg);
    h->magic = MT_SHM_MAGIC;
    h->version = MT_SHM_VERSION;
    h->endian_mark = MT_SHM_ENDIAN_MARK;
    h->header_bytes = MT_HEADER_BYTES;
    h->word_bits = 64;
    h->segment_bytes = seg->size;
    h->pid = sp->pid;
    h->uid = (uint32_t)getuid();
    h->ppid = (int32_t)getppid();
    h->proc_start_ticks = start_ticks(sp->pid);
    h->start_unix_ns = 1700000000ull * 1000000000ull;
    snprintf(h->exe, sizeof h->exe, "/usr/bin/test-prog");
    snprintf(h->cmdline, sizeof h->cmdline, "test-prog --flag \"quoted\"");
    h->max_depth = 32;
    h->publish_interval_ms = 1000;
    h->temporary_ns = 100000000ull;
    uint64_t off = MT_HEADER_BYTES;
    h->defs_off = off, h->defs_cap = sp->defs_cap, off += sp->defs_cap;
    h->modules_off = off, h->modules_cap = sp->modules_cap, off += sp->modules_cap;
    for (unsigned i = 0; i < MT_SLOTS; i++) {
        h->slots[i].off = off;
        h->slots[i].cap = sp->slot_cap;
        off += sp->slot_cap;
    }
}

static void fill_defs(sb_seg *seg, const sb_spec *sp)
{
    mt_shm_header *h = sb_header(seg);
    uint64_t used = 0;
    for (uint32_t id = 0; id < sp->ntraces; id++) {
        mt_shm_def d = {.id = id,
                        .nframes = (uint16_t)sp->nframes,
                        .hash = 0x9e37 * (id + 1),
                        .first_seen_ns = 1000 * id};
        unsigned char *at = seg->buf + h->defs_off + used;
        memcpy(at, &d, sizeof d);
        for (uint32_t j = 0; j < sp->nframes; j++) {
            unsigned mod = sp->nmodules ? (id + j) % sp->nmodules : 0;
            uint64_t addr = sb_module_start(mod) + 0x100 * j + id;
            memcpy(at + sizeof d + j * sizeof addr, &addr, sizeof addr);
        }
        used += mt_def_bytes(sp->nframes);
    }
    h->defs_used = used;
    h->defs_count = sp->ntraces;
}

static void fill_modules(sb_seg *seg, const sb_spec *sp)
{
    mt_shm_header *h = sb_header(seg);
    for (unsigned i = 0; i < sp->nmodules; i++) {
        mt_shm_module *m = sb_module(seg, i);
        m->start = sb_module_start(i);
        m->end = m->start + MOD_SIZE;
        m->bias = sb_module_bias(i);
        m->load_seq = 1;
        m->build_id_len = 20;
        snprintf(m->path, sizeof m->path, "/lib/mod%u.so", i);
    }
    h->modules_used = sp->nmodules * sizeof(mt_shm_module);
    h->modules_count = sp->nmodules;
}

static void fill_slot(sb_seg *seg, const sb_spec *sp, unsigned i, uint64_t publish_seq)
{
    mt_shm_slot *s = sb_slot(seg, i);
    s->publish_seq = publish_seq;
    s->t_ns = publish_seq * 1000000000ull;
    s->unix_ns = sb_header(seg)->start_unix_ns + s->t_ns;
    s->ckpt_ns[0] = s->t_ns - 1000000000ull;
    s->ntimeline = sp->ntimeline;
    s->ntraces = sp->ntraces;
    s->defs_count = sp->ntraces;
    s->modules_count = sp->nmodules;
    mt_shm_point *pts = (mt_shm_point *)(s + 1);
    for (uint32_t k = 0; k < sp->ntimeline; k++)
        pts[k] = (mt_shm_point){.t_ns = k * 250000000ull, .alloc_count = 10 * k};
    mt_shm_trace *tr = sb_traces(seg, i);
    for (uint32_t t = 0; t < sp->ntraces; t++) {
        tr[t] = (mt_shm_trace){.id = t,
                               .alloc_count = t + 2,
                               .alloc_bytes = 100 * (t + 2),
                               .free_count = 1,
                               .free_bytes = 100,
                               .live_count = t + 1,
                               .live_bytes = 100 * (t + 1) * publish_seq};
        tr[t].ckpt_live_bytes[0] = 100 * (t + 1);
        s->totals.live_bytes += tr[t].live_bytes;
        s->totals.live_count += tr[t].live_count;
        s->totals.alloc_count += tr[t].alloc_count;
    }
    s->totals.trace_count = sp->ntraces;
    s->totals.allocator_bytes = MT_UNKNOWN;
    sb_header(seg)->slots[i].seq = 2;
}

int sb_build(sb_seg *seg, const sb_spec *sp)
{
    seg->size = MT_HEADER_BYTES + sp->defs_cap + sp->modules_cap + MT_SLOTS * sp->slot_cap;
    seg->buf = calloc(1, seg->size);
    if (!seg->buf)
        return -1;
    fill_header(seg, sp);
    fill_defs(seg, sp);
    fill_modules(seg, sp);
    fill_slot(seg, sp, 0, 1);
    fill_slot(seg, sp, 1, 2);
    sb_header(seg)->latest_slot = 1;
    sb_header(seg)->publish_count = 2;
    return 0;
}

void sb_free(sb_seg *seg)
{
    free(seg->buf);
    seg->buf = NULL;
}

mt_shm_slot *sb_slot(const sb_seg *seg, unsigned i)
{
    return (mt_shm_slot *)(seg->buf + sb_header(seg)->slots[i].off);
}

mt_shm_trace *sb_traces(const sb_seg *seg, unsigned i)
{
    mt_shm_slot *s = sb_slot(seg, i);
    return (mt_shm_trace *)((unsigned char *)(s + 1) + s->ntimeline * sizeof(mt_shm_point));
}

mt_shm_def *sb_def(const sb_seg *seg, uint32_t id)
{
    const mt_shm_header *h = sb_header(seg);
    uint64_t off = 0;
    for (uint32_t i = 0; i < id; i++)
        off += mt_def_bytes(((mt_shm_def *)(seg->buf + h->defs_off + off))->nframes);
    return (mt_shm_def *)(seg->buf + h->defs_off + off);
}

mt_shm_module *sb_module(const sb_seg *seg, unsigned i)
{
    return (mt_shm_module *)(seg->buf + sb_header(seg)->modules_off + i * sizeof(mt_shm_module));
}

int sb_write(const sb_seg *seg, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, seg->buf, seg->size);
    close(fd);
    return w == (ssize_t)seg->size ? 0 : -1;
}
