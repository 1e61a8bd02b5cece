/* shm_validate.c -- validation of a segment header.
 *
 * Everything the reader later relies on is checked here once: identity
 * (magic, version, byte order, word size), sizes, and the bounds of every
 * region.  The live counters are checked here for plausibility and again
 * by the code that uses them. */
#include <string.h>

#include "shm_guard.h"
#include "shm_segment.h"

_Static_assert(sizeof(mt_shm_header) <= MT_HEADER_BYTES, "header area too small");

typedef struct region {
    const char *name;
    uint64_t off, cap;
} region;

static bool fits(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

static mt_errc check_identity(const mt_shm_header *h, uint64_t file_bytes, mt_err *err)
{
    if (file_bytes < sizeof h->magic)
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (%llu bytes)",
                          (unsigned long long)file_bytes);
    if (h->magic == 0)
        return mt_err_set(err, MT_E_NOTREADY, "segment header not written yet");
    if (h->magic == __builtin_bswap64(MT_SHM_MAGIC))
        return mt_err_set(err, MT_E_FOREIGN, "foreign byte order (segment of a big-endian host)");
    if (h->magic != MT_SHM_MAGIC)
        return mt_err_set(err, MT_E_NOTMEMTOP, "not a memtop segment (bad magic)");
    if (h->version == 0 && h->endian_mark == 0)
        return mt_err_set(err, MT_E_NOTREADY, "segment header not written yet");
    if (file_bytes < sizeof *h)
        return mt_err_set(err, MT_E_TRUNCATED, "truncated segment: %llu bytes, header needs %zu",
                          (unsigned long long)file_bytes, sizeof *h);
    if (h->version != MT_SHM_VERSION && h->version != MT_SHM_VERSION_SAMPLED)
        return mt_err_set(err, MT_E_FOREIGN,
                          "foreign version %u (this memtop reads versions %u and %u)", h->version,
                          MT_SHM_VERSION, MT_SHM_VERSION_SAMPLED);
    if (h->endian_mark != MT_SHM_ENDIAN_MARK)
        return mt_err_set(err, MT_E_FOREIGN, "foreign byte order mark 0x%08x", h->endian_mark);
    if (h->word_bits != 64)
        return mt_err_set(err, MT_E_FOREIGN, "foreign word size: %u bits", h->word_bits);
    return MT_OK;
}

static mt_errc check_size(const mt_shm_header *h, uint64_t file_bytes, mt_err *err)
{
    if (h->header_bytes != MT_HEADER_BYTES)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: header_bytes %u, expected %u",
                          h->header_bytes, MT_HEADER_BYTES);
    if (h->segment_bytes < MT_HEADER_BYTES)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: segment_bytes %llu",
                          (unsigned long long)h->segment_bytes);
    if (file_bytes < h->segment_bytes || file_bytes < MT_HEADER_BYTES)
        return mt_err_set(err, MT_E_TRUNCATED,
                          "truncated segment: file has %llu bytes, header says %llu",
                          (unsigned long long)file_bytes, (unsigned long long)h->segment_bytes);
    return MT_OK;
}

static mt_errc check_region(const region *r, uint64_t min_cap, uint64_t limit, mt_err *err)
{
    if (r->off % 8 || r->off < MT_HEADER_BYTES || !fits(r->off, r->cap, limit))
        return mt_err_set(err, MT_E_CORRUPT,
                          "corrupt segment: %s region [%llu, +%llu) outside the file", r->name,
                          (unsigned long long)r->off, (unsigned long long)r->cap);
    if (r->cap < min_cap)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: %s region too small (%llu bytes)",
                          r->name, (unsigned long long)r->cap);
    return MT_OK;
}

static bool overlap(const region *a, const region *b)
{
    if (a->cap == 0 || b->cap == 0)
        return false;
    return a->off < b->off + b->cap && b->off < a->off + a->cap;
}

static mt_errc check_regions(const mt_shm_header *h, mt_layout *lay, mt_err *err)
{
    region r[2 + MT_SLOTS] = {
        {"defs", h->defs_off, h->defs_cap},
        {"modules", h->modules_off, h->modules_cap},
    };
    static const char *const slot_names[] = {"slot 0", "slot 1", "slot 2"};
    _Static_assert(MT_SLOTS == 3, "slot_names");
    for (unsigned i = 0; i < MT_SLOTS; i++)
        r[2 + i] = (region){slot_names[i], h->slots[i].off, h->slots[i].cap};
    for (unsigned i = 0; i < 2 + MT_SLOTS; i++) {
        mt_errc rc = check_region(&r[i], i >= 2 ? sizeof(mt_shm_slot) : 0, lay->size, err);
        if (rc)
            return rc;
        for (unsigned j = 0; j < i; j++)
            if (overlap(&r[i], &r[j]))
                return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: %s overlaps %s", r[i].name,
                                  r[j].name);
    }
    lay->defs_off = h->defs_off;
    lay->defs_cap = h->defs_cap;
    lay->modules_off = h->modules_off;
    lay->modules_cap = h->modules_cap;
    for (unsigned i = 0; i < MT_SLOTS; i++) {
        lay->slot_off[i] = h->slots[i].off;
        lay->slot_cap[i] = h->slots[i].cap;
    }
    return MT_OK;
}

typedef struct live {
    const mt_shm_header *h;
    uint64_t dcount, mcount, dused, mused;
    uint32_t latest;
} live;

/* The writer stores a count, then the length that covers the record:
 * loading counts first, a count may lead its length by one record. */
static void load_live(void *ctx)
{
    live *l = ctx;
    l->dcount = __atomic_load_n(&l->h->defs_count, __ATOMIC_ACQUIRE);
    l->mcount = __atomic_load_n(&l->h->modules_count, __ATOMIC_ACQUIRE);
    l->dused = __atomic_load_n(&l->h->defs_used, __ATOMIC_ACQUIRE);
    l->mused = __atomic_load_n(&l->h->modules_used, __ATOMIC_ACQUIRE);
    l->latest = __atomic_load_n(&l->h->latest_slot, __ATOMIC_ACQUIRE);
}

static mt_errc check_live(const unsigned char *base, uint64_t file_bytes, const mt_layout *lay,
                          mt_err *err)
{
    live l = {.h = (const mt_shm_header *)base};
    mt_errc rc = mt_guard_run(base, file_bytes, load_live, &l, err);
    if (rc)
        return rc;
    uint64_t dcount = l.dcount, mcount = l.mcount, dused = l.dused, mused = l.mused;
    uint32_t latest = l.latest;
    if (dused > lay->defs_cap || dused % 8)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: defs_used %llu (capacity %llu)",
                          (unsigned long long)dused, (unsigned long long)lay->defs_cap);
    if (mused > lay->modules_cap || mused % sizeof(mt_shm_module))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: modules_used %llu (capacity %llu)",
                          (unsigned long long)mused, (unsigned long long)lay->modules_cap);
    if (dcount > dused / sizeof(mt_shm_def) + 1 || mcount > mused / sizeof(mt_shm_module) + 1)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: implausible record counts");
    if (latest >= MT_SLOTS)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: latest_slot %u", latest);
    return MT_OK;
}

static void copy_str(char *dst, const char *src, size_t n)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static mt_errc check_who(const mt_shm_header *h, mt_identity *id, mt_err *err)
{
    if (h->pid <= 0)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: pid %d", h->pid);
    if (h->max_depth == 0)
        return mt_err_set(err, MT_E_NOTREADY, "segment settings not written yet");
    if (h->max_depth > MT_MAX_DEPTH)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: max_depth %u", h->max_depth);
    id->pid = h->pid;
    id->ppid = h->ppid;
    id->uid = h->uid;
    id->proc_start_ticks = h->proc_start_ticks;
    id->start_unix_ns = h->start_unix_ns;
    id->max_depth = h->max_depth;
    id->publish_interval_ms = h->publish_interval_ms;
    id->temporary_ns = h->temporary_ns;
    id->sample_rate_bytes = h->version == MT_SHM_VERSION_SAMPLED ? h->sample_rate_bytes : 0;
    if (h->version == MT_SHM_VERSION_SAMPLED && !id->sample_rate_bytes)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: sampled without a rate");
    copy_str(id->exe, h->exe, sizeof id->exe);
    copy_str(id->cmdline, h->cmdline, sizeof id->cmdline);
    return MT_OK;
}

/* The fixed fields are validated on a private copy, so that a writer
 * changing them concurrently cannot slip a value past a check.  The file
 * may also shrink under the copy: the guard turns that into an error. */
mt_errc mt_validate_header(const unsigned char *base, uint64_t file_bytes, mt_layout *lay,
                           mt_identity *id, mt_err *err)
{
    mt_shm_header h;
    memset(&h, 0, sizeof h);
    uint64_t magic = 0; /* acquire: the writer may publish the magic last */
    mt_errc rc = MT_OK;
    if (file_bytes >= sizeof magic)
        rc = mt_guard_load64(base, file_bytes, (const uint64_t *)base, &magic, err);
    if (!rc)
        rc = mt_guard_copy(base, file_bytes, &h, base,
                           file_bytes < sizeof h ? file_bytes : sizeof h, err);
    if (rc)
        return rc;
    h.magic = magic;
    rc = check_identity(&h, file_bytes, err);
    if (!rc)
        rc = check_size(&h, file_bytes, err);
    if (rc)
        return rc;
    memset(lay, 0, sizeof *lay);
    lay->size = h.segment_bytes;
    rc = check_regions(&h, lay, err);
    if (!rc)
        rc = check_live(base, file_bytes, lay, err);
    if (!rc)
        rc = check_who(&h, id, err);
    return rc;
}
