/* many_stacks.c -- memtop-many-stacks: far more distinct backtraces than
 * memtop's trace table holds, with an exact ground truth of the totals.
 *
 * Why it exists: the totals of a snapshot must stay exact when backtraces
 * overflow the trace table (MEMTOP_MAX_TRACES) and when traces are folded
 * into the overflow trace (tests/e2e/check_overflow.py).  Allocation i goes
 * through a call path that spells i: its low 2 bits pick one of 4 leaf
 * functions (the malloc call sites), each further bit which of two
 * functions is the frame at that level, so N allocations have N distinct
 * backtraces.  Block i replaces block i - LIVE (freed first), so LIVE
 * blocks stay live at exit.
 *
 * Nothing else here allocates: no stdio (the ground truth is formatted
 * with snprintf into a stack buffer and written with write(2)), no threads,
 * no locale; so the process's totals are exactly what this program did.
 *
 * Usage: memtop-many-stacks GROUND.json STACKS LIVE
 *   STACKS: 1..2^24 allocations (and distinct backtraces); LIVE: 1..STACKS.
 *   Writes {"alloc_count": ..., "alloc_bytes": ..., "free_count": ...,
 *   "free_bytes": ..., "live_count": ..., "live_bytes": ...}.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define MAX_STACKS (1ul << 24)

typedef struct req {
    unsigned long index;
    unsigned level; /* bits of index above the leaf bits still to spell */
    size_t size;
} req;

static void *path(req *r);

static NOINLINE void *leaf0(size_t n)
{
    void *p = malloc(n);
    ESCAPE(p);
    return p;
}

static NOINLINE void *leaf1(size_t n)
{
    void *p = malloc(n);
    ESCAPE(p);
    return p;
}

static NOINLINE void *leaf2(size_t n)
{
    void *p = malloc(n);
    ESCAPE(p);
    return p;
}

static NOINLINE void *leaf3(size_t n)
{
    void *p = malloc(n);
    ESCAPE(p);
    return p;
}

static NOINLINE void *lv_a(req *r)
{
    void *p = path(r);
    ESCAPE(r);
    return p;
}

static NOINLINE void *lv_b(req *r)
{
    void *p = path(r);
    ESCAPE(r);
    return p;
}

static NOINLINE void *path(req *r)
{
    if (r->level == 0) {
        switch (r->index & 3u) {
        case 0:
            return leaf0(r->size);
        case 1:
            return leaf1(r->size);
        case 2:
            return leaf2(r->size);
        default:
            return leaf3(r->size);
        }
    }
    r->level--;
    return (r->index >> (2 + r->level)) & 1u ? lv_b(r) : lv_a(r);
}

static int usage(void)
{
    static const char msg[] = "usage: memtop-many-stacks GROUND.json STACKS LIVE\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    return 2;
}

static bool parse(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    unsigned long n, live;
    if (argc != 4 || !parse(argv[2], 1, MAX_STACKS, &n) || !parse(argv[3], 1, n, &live))
        return usage();
    unsigned levels = 0;
    while ((4ul << levels) < n)
        levels++;
    /* The ring of live blocks comes from mmap: it is not the program's heap. */
    void **ring =
        mmap(NULL, live * sizeof *ring, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t *sizes = mmap(NULL, live * sizeof *sizes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring == MAP_FAILED || sizes == MAP_FAILED)
        return 1;
    uint64_t ac = 0, ab = 0, fc = 0, fb = 0;
    for (unsigned long i = 0; i < n; i++) {
        unsigned long k = i % live;
        if (ring[k]) {
            free(ring[k]);
            fc++;
            fb += sizes[k];
        }
        req r = {i, levels, 16 + (i * 37) % 1000};
        ring[k] = path(&r);
        if (!ring[k])
            return 1;
        sizes[k] = r.size;
        ac++;
        ab += r.size;
    }
    char buf[512];
    int len = snprintf(buf, sizeof buf,
                       "{\"alloc_count\": %llu, \"alloc_bytes\": %llu, \"free_count\": %llu, "
                       "\"free_bytes\": %llu, \"live_count\": %llu, \"live_bytes\": %llu}\n",
                       (unsigned long long)ac, (unsigned long long)ab, (unsigned long long)fc,
                       (unsigned long long)fb, (unsigned long long)(ac - fc),
                       (unsigned long long)(ab - fb));
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, buf, (size_t)len) != len || close(fd) != 0)
        return 1;
    return 0;
}
