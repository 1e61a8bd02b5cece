/* segmap.c -- read-only view of a memtop segment for the pitfall tests.
 *
 * Validates every offset and count against the file size before use and
 * reads slots with the seqlock protocol of shm_layout.h, so it is safe on a
 * segment whose writer is still running (or was killed mid-write).
 */
#include "segmap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what)
{
    fprintf(stderr, "segtool: %s\n", what);
    return -1;
}

/* True if [off, off+len) lies inside the file. */
static int in_file(const mtp_seg *seg, uint64_t off, uint64_t len)
{
    return off <= seg->size && len <= seg->size - off;
}

static int check_header(const mtp_seg *seg)
{
    const mt_shm_header *h = seg->hdr;
    if (h->magic != MT_SHM_MAGIC)
        return fail("bad magic");
    if ((h->version != MT_SHM_VERSION && h->version != MT_SHM_VERSION_SAMPLED) ||
        h->endian_mark != MT_SHM_ENDIAN_MARK)
        return fail("foreign version or byte order");
    if (h->header_bytes != MT_HEADER_BYTES || h->word_bits != 64)
        return fail("bad header size or word size");
    uint64_t du = mtp_load_acq(&h->defs_used), mu = mtp_load_acq(&h->modules_used);
    if (du > h->defs_cap || !in_file(seg, h->defs_off, du))
        return fail("definitions region outside the file");
    if (mu > h->modules_cap || !in_file(seg, h->modules_off, mu))
        return fail("module region outside the file");
    return 0;
}

int mtp_seg_open(const char *path, mtp_seg *seg)
{
    memset(seg, 0, sizeof *seg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail("cannot open segment");
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(mt_shm_header)) {
        close(fd);
        return fail("segment too small");
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail("cannot map segment");
    seg->base = p;
    seg->size = (size_t)st.st_size;
    seg->hdr = p;
    if (check_header(seg) != 0) {
        mtp_seg_close(seg);
        return -1;
    }
    return 0;
}

void mtp_seg_close(mtp_seg *seg)
{
    if (seg->base)
        munmap((void *)seg->base, seg->size);
    memset(seg, 0, sizeof *seg);
}

/* Copies slot i into snap if it holds a complete snapshot: 0 ok, 1 not. */
static int copy_slot(const mtp_seg *seg, unsigned i, mtp_snap *snap)
{
    const mt_shm_slot_ref *ref = &seg->hdr->slots[i];
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint64_t s1 = mtp_load_acq(&ref->seq);
        if (s1 == 0 || (s1 & 1))
            return 1;
        if (ref->cap < sizeof(mt_shm_slot) || !in_file(seg, ref->off, ref->cap))
            return 1;
        memcpy(&snap->slot, seg->base + ref->off, sizeof snap->slot);
        uint64_t nt = snap->slot.ntraces, ntl = snap->slot.ntimeline;
        uint64_t need = sizeof(mt_shm_slot) + ntl * sizeof(mt_shm_point);
        if (nt > ref->cap / sizeof(mt_shm_trace) || ntl > MT_TIMELINE_POINTS ||
            need + nt * sizeof(mt_shm_trace) > ref->cap)
            continue; /* torn header: re-check seq */
        free(snap->traces);
        snap->traces = malloc(nt * sizeof(mt_shm_trace) + 1);
        if (!snap->traces)
            return 1;
        memcpy(snap->traces, seg->base + ref->off + need, nt * sizeof(mt_shm_trace));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&ref->seq, __ATOMIC_RELAXED) == s1)
            return 0;
    }
    return 1;
}

/* Indexes the definition records visible to the snapshot. */
static int index_defs(const mtp_seg *seg, mtp_snap *snap)
{
    const mt_shm_header *h = seg->hdr;
    uint64_t used = mtp_load_acq(&h->defs_used), pos = 0, n = snap->slot.defs_count;
    if (n > used / sizeof(mt_shm_def))
        return fail("slot claims more definitions than the region holds");
    snap->def_offs = malloc((n + 1) * sizeof(uint64_t));
    if (!snap->def_offs)
        return fail("out of memory");
    for (uint64_t id = 0; id < n; id++) {
        const mt_shm_def *d = (const void *)(seg->base + h->defs_off + pos);
        if (used - pos < sizeof(mt_shm_def) || d->id != id || d->nframes > MT_MAX_DEPTH ||
            used - pos < mt_def_bytes(d->nframes))
            return fail("corrupt definition record");
        snap->def_offs[id] = h->defs_off + pos;
        pos += (mt_def_bytes(d->nframes) + 7) & ~(uint64_t)7;
    }
    snap->ndefs = n;
    return 0;
}

int mtp_seg_snapshot(const mtp_seg *seg, mtp_snap *snap)
{
    memset(snap, 0, sizeof *snap);
    mtp_snap best = {0}, cur = {0};
    int found = 0;
    for (unsigned i = 0; i < MT_SLOTS; i++) {
        if (copy_slot(seg, i, &cur) != 0)
            continue;
        if (!found || cur.slot.publish_seq > best.slot.publish_seq) {
            free(best.traces);
            best = cur;
            cur.traces = NULL;
            found = 1;
        }
    }
    free(cur.traces);
    if (!found)
        return 1;
    *snap = best;
    if (index_defs(seg, snap) != 0)
        return -1;
    for (uint64_t t = 0; t < snap->slot.ntraces; t++)
        if (snap->traces[t].id >= snap->ndefs)
            return fail("trace refers to an unknown definition");
    return 0;
}

void mtp_snap_free(mtp_snap *snap)
{
    free(snap->traces);
    free(snap->def_offs);
    memset(snap, 0, sizeof *snap);
}

const mt_shm_def *mtp_seg_def(const mtp_seg *seg, const mtp_snap *snap, uint32_t id)
{
    return id < snap->ndefs ? (const void *)(seg->base + snap->def_offs[id]) : NULL;
}

const mt_shm_module *mtp_seg_module(const mtp_seg *seg, uint64_t addr)
{
    const mt_shm_header *h = seg->hdr;
    uint64_t n = mtp_load_acq(&h->modules_used) / sizeof(mt_shm_module);
    const mt_shm_module *mods = (const void *)(seg->base + h->modules_off);
    for (uint64_t i = n; i-- > 0;)
        if (mods[i].start <= addr && addr < mods[i].end)
            return &mods[i];
    return NULL;
}
