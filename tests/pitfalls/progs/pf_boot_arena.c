/* pf_boot_arena.c -- blocks of memtop's bootstrap arena, used by the
 * program after resolution.
 *
 * While memtop looks up the real allocator (dlsym, hook_real_alloc.c),
 * every allocation, dlsym's own or another thread's, is served from a
 * static arena inside libmemtop.so; such a block can reach the program and
 * come back to the hooks long after: free must drop it (never hand it to
 * the real free), realloc must move it into a real block with its bytes,
 * malloc_usable_size must answer its size.  The window is a few
 * microseconds at start, too short to hit by chance, so the program opens
 * it itself: it sets memtop's resolution state to "busy" (the driver gives
 * the symbols' offsets in libmemtop.so, from nm), allocates with every
 * function, checks that the blocks lie in the arena, and sets the state
 * back.  Plainly (no libmemtop.so) the same calls go to glibc: the output
 * is the same.  Marker sizes 5003 and 5011: the realloc'ed blocks, counted
 * as allocated at realloc and freed (pf_boot_arena.py).
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <link.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

enum { RESOLVE_BUSY = 1, RESOLVE_DONE = 2 }; /* hook_real_alloc.h */
#define ARENA_BYTES (256u * 1024u)           /* MT_BOOT_ARENA_BYTES */

static uintptr_t g_memtop_base;

static int find_memtop(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    if (info->dlpi_name && strstr(info->dlpi_name, "libmemtop")) {
        g_memtop_base = info->dlpi_addr;
        return 1;
    }
    return 0;
}

/* The address of a symbol of libmemtop.so whose offset is in env var. */
static void *memtop_symbol(const char *var)
{
    const char *off = getenv(var);
    if (!g_memtop_base || !off)
        return NULL;
    return (void *)(g_memtop_base + strtoull(off, NULL, 16));
}

static int in_arena(const unsigned char *arena, const void *p)
{
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA_BYTES;
}

int main(void)
{
    dl_iterate_phdr(find_memtop, NULL);
    _Atomic int *state = memtop_symbol("PF_RESOLVE_STATE_OFF");
    const unsigned char *arena = memtop_symbol("PF_BOOT_ARENA_OFF");
    PF_CHECK(!g_memtop_base || (state && arena), "libmemtop.so loaded without the offsets");
    if (state) {
        PF_CHECK(atomic_load(state) == RESOLVE_DONE, "resolved by main");
        atomic_store(state, RESOLVE_BUSY); /* as if another thread were resolving */
    }
    char *a = malloc(100);
    char *b = calloc(10, 30);
    char *c = aligned_alloc(64, 192);
    char *d = realloc(NULL, 77);
    void *e = NULL;
    int rc = posix_memalign(&e, 256, 300);
    char *f = memalign(4096, 10);
    if (state) {
        atomic_store(state, RESOLVE_DONE);
        /* Sampled (MEMTOP_SAMPLE): malloc, calloc and realloc have fast
         * paths that go straight to the real allocator for a block not to
         * be sampled (no such path runs before resolution ends, so only
         * this test's window sees them); the aligned functions have none. */
        int sampled = getenv("MEMTOP_SAMPLE") != NULL;
        void *all[] = {c, e, f, a, b, d};
        for (size_t i = 0; i < (sampled ? 3u : 6u); i++)
            PF_CHECK(in_arena(arena, all[i]), "block %zu (%p) is not in the arena", i, all[i]);
    }
    PF_CHECK(a && b && c && d && rc == 0 && e && f, "allocations");
    memset(a, 'a', 100);
    memset(d, 'd', 77);
    PF_CHECK(malloc_usable_size(a) >= 100 && malloc_usable_size(d) >= 77, "usable size");
    for (int i = 0; i < 300; i++)
        PF_CHECK(b[i] == 0, "calloc's byte %d", i);
    PF_CHECK((uintptr_t)c % 64 == 0 && (uintptr_t)e % 256 == 0 && (uintptr_t)f % 4096 == 0,
             "alignment");
    char *a2 = pf_escape(realloc(a, 5003)); /* out of the arena, into a real block */
    char *b2 = pf_escape(realloc(b, 5011));
    PF_CHECK(a2 && b2, "realloc");
    for (int i = 0; i < 100; i++)
        PF_CHECK(a2[i] == 'a' && b2[i * 3] == 0, "realloc kept the bytes (%d)", i);
    PF_CHECK(malloc_usable_size(a2) >= 5003, "usable size after realloc");
    char *d2 = pf_escape(realloc(d, 40)); /* smaller: the first 40 bytes */
    PF_CHECK(d2 && memcmp(d2, "dddddddddddddddddddddddddddddddddddddddd", 40) == 0, "shrink");
    free(a2);
    free(b2);
    free(d2);
    free(c); /* arena blocks: dropped, never given to the real free */
    free(e);
    free(f);
    free(NULL);
    puts("arena blocks: bytes kept, zeroed, aligned, moved out by realloc, freed");
    return 0;
}
