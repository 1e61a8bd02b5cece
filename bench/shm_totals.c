/* shm_totals.c -- memtop-bench-totals: prints the totals of the newest
 * snapshot in a libmemtop segment file as key=value lines.
 *
 * bench/run.sh needs totals.tracker_bytes (memtop's bookkeeping memory),
 * which the JSON export does not have to carry; this tiny reader takes it
 * straight from the segment (src/ipc/shm_layout.h).  It is a bench helper,
 * not a viewer: it validates what it reads and fails with one line.
 *
 * usage: memtop-bench-totals SEGMENT_FILE     (e.g. $MEMTOP_SHM_DIR/memtop-PID)
 */
#include "shm_layout.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seg_view {
    const unsigned char *base;
    uint64_t size;
} seg_view;

static int fail(const char *msg)
{
    fprintf(stderr, "memtop-bench-totals: %s\n", msg);
    return 1;
}

static int map_segment(const char *path, seg_view *v)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || st.st_size < (off_t)sizeof(mt_shm_header)) {
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    v->base = p;
    v->size = (uint64_t)st.st_size;
    return 0;
}

static const char *check_header(const mt_shm_header *h)
{
    if (h->magic != MT_SHM_MAGIC)
        return "not a memtop segment (bad magic)";
    if (h->version != MT_SHM_VERSION || h->endian_mark != MT_SHM_ENDIAN_MARK || h->word_bits != 64)
        return "unsupported segment version or byte order";
    if (h->header_bytes != MT_HEADER_BYTES)
        return "bad header size";
    return NULL;
}

/* Copies the newest complete slot header under its seqlock; tries the older
 * slots when one is being written.  Returns 0 or -1. */
static int read_slot(const seg_view *v, mt_shm_slot *out)
{
    const mt_shm_header *h = (const void *)v->base;
    uint32_t latest = __atomic_load_n(&h->latest_slot, __ATOMIC_ACQUIRE);
    if (latest >= MT_SLOTS)
        return -1;
    for (unsigned tries = 0; tries < 3 * MT_SLOTS * 100; tries++) {
        unsigned i = (latest + MT_SLOTS - tries % MT_SLOTS) % MT_SLOTS;
        const mt_shm_slot_ref *ref = &h->slots[i];
        uint64_t s1 = __atomic_load_n(&ref->seq, __ATOMIC_ACQUIRE);
        uint64_t off = ref->off, cap = ref->cap;
        if (s1 == 0 || (s1 & 1u) || cap < sizeof(mt_shm_slot) || off > v->size ||
            v->size - off < sizeof(mt_shm_slot) || off % 8u)
            continue;
        memcpy(out, v->base + off, sizeof *out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&ref->seq, __ATOMIC_RELAXED) == s1)
            return 0;
    }
    return -1;
}

static void print_totals(const mt_shm_header *h, const mt_shm_slot *s)
{
    const mt_shm_totals *t = &s->totals;
    uint32_t flags = __atomic_load_n(&h->flags, __ATOMIC_ACQUIRE);
    printf("pid=%" PRId32 "\nexited=%u\npublish_seq=%" PRIu64 "\n", h->pid,
           (flags & MT_FLAG_EXITED) ? 1u : 0u, s->publish_seq);
#define P(f) printf(#f "=%" PRIu64 "\n", t->f)
    P(live_bytes);
    P(live_count);
    P(alloc_count);
    P(alloc_bytes);
    P(free_count);
    P(free_bytes);
    P(temporary_count);
    P(unknown_free_count);
    P(untracked_alloc_count);
    P(missed_free_count);
    P(dropped_traces);
    P(rss_bytes);
    P(tracker_bytes);
    P(trace_count);
    P(thread_count);
#undef P
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fail("usage: memtop-bench-totals SEGMENT_FILE");
    seg_view v;
    if (map_segment(argv[1], &v))
        return fail("cannot map the segment (missing, unreadable or truncated)");
    const mt_shm_header *h = (const void *)v.base;
    const char *err = check_header(h);
    if (err)
        return fail(err);
    mt_shm_slot slot;
    if (read_slot(&v, &slot))
        return fail("no complete snapshot in the segment");
    print_totals(h, &slot);
    return 0;
}
