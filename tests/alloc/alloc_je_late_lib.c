/* alloc_je_late_lib.c -- a library with a jemalloc of its own linked in
 * (Debian's libjemalloc_pic.a, its public names prefixed _ljem_ with
 * objcopy --redefine-syms, hidden with --exclude-libs: tests/alloc's
 * CMakeLists.txt), for tests/alloc/check_je_late.py.  alloc_je_late loads
 * it with dlopen after start while its threads allocate; memtop must
 * find this jemalloc then and count its blocks to the byte
 * (docs/allocators.md, "When").
 *
 * lj_work() leaks 1000 bytes from lj_leak_malloc (_ljem_malloc), 2000
 * from lj_leak_calloc, 3000 from lj_leak_mallocx and 4000 from
 * lj_leak_rallocx (grown from 100 with _ljem_rallocx), and frees 400
 * blocks in every way (free, sdallocx, dallocx, rallocx then sdallocx)
 * in lj_free_all_ways.  With ALLOC_JE_LATE_CTOR set, the library's
 * constructor leaks 5000 bytes from its jemalloc before memtop can have
 * hooked it (it runs inside dlopen): the data must then say NOT exact. */
#include <stddef.h>
#include <stdlib.h>

void *_ljem_malloc(size_t n);
void *_ljem_calloc(size_t a, size_t b);
void _ljem_free(void *p);
void *_ljem_mallocx(size_t n, int flags);
void *_ljem_rallocx(void *p, size_t n, int flags);
void _ljem_sdallocx(void *p, size_t n, int flags);
void _ljem_dallocx(void *p, int flags);

static void *volatile sink;

/* each of these keeps its frame (no tail call): it is frames[0] */
__attribute__((noinline)) void lj_leak_malloc(void)
{
    sink = _ljem_malloc(1000);
}

__attribute__((noinline)) void lj_leak_calloc(void)
{
    sink = _ljem_calloc(20, 100);
}

__attribute__((noinline)) void lj_leak_mallocx(void)
{
    sink = _ljem_mallocx(3000, 0);
}

__attribute__((noinline)) void lj_leak_rallocx(void)
{
    void *p = _ljem_mallocx(100, 0);
    sink = _ljem_rallocx(p, 4000, 0);
}

__attribute__((noinline)) void lj_free_all_ways(void)
{
    for (int i = 0; i < 100; i++) {
        _ljem_free(sink = _ljem_malloc(48));
        _ljem_sdallocx(sink = _ljem_mallocx(700, 0), 700, 0);
        _ljem_dallocx(sink = _ljem_calloc(3, 1000), 0);
        void *p = _ljem_mallocx(64, 0);
        p = _ljem_rallocx(p, 9000, 0);
        _ljem_sdallocx(sink = p, 9000, 0);
    }
}

void lj_work(void)
{
    lj_leak_malloc();
    lj_leak_calloc();
    lj_leak_mallocx();
    lj_leak_rallocx();
    lj_free_all_ways();
}

__attribute__((noinline)) static void lj_ctor_leak(void)
{
    sink = _ljem_malloc(5000);
}

__attribute__((constructor)) static void lj_init(void)
{
    if (getenv("ALLOC_JE_LATE_CTOR"))
        lj_ctor_leak();
}
