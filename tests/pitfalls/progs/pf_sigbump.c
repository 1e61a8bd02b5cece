/* pf_sigbump.c -- a program's own malloc that a signal handler may call
 * (pf_sigcount.c, pf_sigcount.py).
 *
 * glibc's malloc is not async-signal-safe, so a program whose signal
 * handler allocates brings an allocator of its own; pf_sigcount links this
 * library, which memtop's preload then interposes in front of (RTLD_NEXT
 * finds it before libc).  Blocks come from one mmap'd arena, carved with an
 * atomic bump: any thread, any signal handler.  Outside a handler, freed
 * blocks of up to MAX_CLASS bytes are kept on per-size free lists under a
 * spin lock and reused (so that addresses recur, as with a real
 * allocator); inside one (pf_sigbump_handler_enter/leave, a per-thread
 * depth) malloc only bumps and free leaves the block alone: no lock the
 * interrupted code may hold is ever taken.  Each block has a 16-byte
 * header below it: its size and its class (NO_CLASS: never reused, aligned
 * or large blocks, and the handler's).  The arena is reserved without
 * backing store; a run allocates well under its size.
 *
 * Built with PF_SIGBUMP_MI (mtp_sigbump_mi, for pf_sigcount_mi), it
 * exports mimalloc's names instead of libc's (mi_malloc, mi_calloc,
 * mi_realloc, mi_free, mi_usable_size): memtop takes it for a shared
 * mimalloc, whose API it hooks by name and redirects, so that the
 * handlers' calls reach those hooks (hook_direct.h) rather than malloc's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_SIZE ((size_t)16 << 30)
#define GRAIN 16u
#define MAX_CLASS 4096u
#define NCLASS (MAX_CLASS / GRAIN + 1u)
#define NO_CLASS UINT32_MAX

typedef struct hdr {
    uint64_t size;
    uint32_t cls;
    uint32_t magic;
} hdr;
#define MAGIC 0x5b5b1a7cu
#define FREED 0xf7eed0d0u /* a freed block's magic: a second free dies */

static _Atomic(char *) g_arena;
static atomic_size_t g_used;
static atomic_flag g_lock = ATOMIC_FLAG_INIT;
static void *g_free[NCLASS]; /* under g_lock: singly linked through the block's first word */
static __thread int t_handler __attribute__((
    tls_model("initial-exec"))); /* depth of pf_sigbump_handler_enter on this thread */

void pf_sigbump_handler_enter(void)
{
    t_handler++;
}

void pf_sigbump_handler_leave(void)
{
    t_handler--;
}

static void die(const char *msg)
{
    (void)!write(2, msg, strlen(msg));
    _exit(97);
}

static char *arena(void)
{
    char *a = atomic_load_explicit(&g_arena, memory_order_acquire);
    if (a)
        return a;
    void *m = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        die("pf_sigbump: no arena\n");
    char *want = NULL;
    if (!atomic_compare_exchange_strong_explicit(&g_arena, &want, (char *)m, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        munmap(m, ARENA_SIZE);
        return want;
    }
    return (char *)m;
}

/* n bytes aligned to align (a power of two, at least GRAIN) with a header
 * below them. */
static void *bump(size_t n, size_t align, uint32_t cls)
{
    if (n > ARENA_SIZE || align > ARENA_SIZE / 2) {
        errno = ENOMEM;
        return NULL;
    }
    size_t need = sizeof(hdr) + n + align - GRAIN;
    size_t off = atomic_fetch_add_explicit(&g_used, (need + GRAIN - 1) & ~(size_t)(GRAIN - 1),
                                           memory_order_relaxed);
    if (off + need > ARENA_SIZE)
        die("pf_sigbump: arena full\n");
    uintptr_t p = (uintptr_t)arena() + off + sizeof(hdr);
    p = (p + align - 1) & ~(uintptr_t)(align - 1);
    hdr *h = (hdr *)p - 1;
    h->size = n;
    h->cls = cls;
    h->magic = MAGIC;
    return (void *)p;
}

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&g_lock, memory_order_acquire))
        ;
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&g_lock, memory_order_release);
}

static hdr *header(void *p)
{
    hdr *h = (hdr *)p - 1;
    if (h->magic == FREED)
        die("pf_sigbump: double free\n");
    if (h->magic != MAGIC)
        die("pf_sigbump: not our block\n");
    return h;
}

/* pf_sigjump.c's: called once, at the start of the next malloc made
 * outside a handler (a real call memtop makes from inside its hook). */
static void (*volatile g_next_malloc)(void);

void pf_sigbump_on_next_malloc(void (*fn)(void))
{
    g_next_malloc = fn;
}

static void *do_malloc(size_t n)
{
    void (*fn)(void) = t_handler ? NULL : g_next_malloc;
    if (fn) {
        g_next_malloc = NULL;
        fn();
    }
    if (t_handler || n > MAX_CLASS)
        return bump(n, GRAIN, NO_CLASS);
    uint32_t cls = (uint32_t)((n + GRAIN - 1) / GRAIN);
    lock();
    void *p = g_free[cls];
    if (p)
        g_free[cls] = *(void **)p;
    unlock();
    if (p) {
        ((hdr *)p - 1)->size = n;
        ((hdr *)p - 1)->magic = MAGIC;
        return p;
    }
    return bump((size_t)cls * GRAIN, GRAIN, cls);
}

static void do_free(void *p)
{
    if (!p)
        return;
    hdr *h = header(p);
    h->magic = FREED;
    if (t_handler || h->cls == NO_CLASS)
        return;
    lock();
    *(void **)p = g_free[h->cls];
    g_free[h->cls] = p;
    unlock();
}

static void *do_calloc(size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = do_malloc(n);
    if (p)
        memset(p, 0, n);
    return p;
}

static void *do_realloc(void *p, size_t n)
{
    if (!p)
        return do_malloc(n);
    if (!n) {
        do_free(p);
        return NULL;
    }
    void *q = do_malloc(n);
    if (q) {
        size_t old = header(p)->size;
        memcpy(q, p, old < n ? old : n);
        do_free(p);
    }
    return q;
}

/* The exported functions call the static ones, never each other by name
 * (which would reach memtop's hooks again from inside the real call). */
#ifdef PF_SIGBUMP_MI
void *mi_malloc(size_t n)
{
    return do_malloc(n);
}

void mi_free(void *p)
{
    do_free(p);
}

void *mi_calloc(size_t a, size_t b)
{
    return do_calloc(a, b);
}

void *mi_realloc(void *p, size_t n)
{
    return do_realloc(p, n);
}

size_t mi_usable_size(const void *p)
{
    return p ? header((void *)p)->size : 0;
}

/* In place or not at all: a block never grows past its size here. */
void *mi_expand(void *p, size_t n)
{
    return p && n <= header(p)->size ? p : NULL;
}
#else
void *malloc(size_t n)
{
    return do_malloc(n);
}

void free(void *p)
{
    do_free(p);
}

void *calloc(size_t a, size_t b)
{
    return do_calloc(a, b);
}

size_t malloc_usable_size(void *p)
{
    return p ? header(p)->size : 0;
}

void *realloc(void *p, size_t n)
{
    return do_realloc(p, n);
}

void *reallocarray(void *p, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return do_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    if (align < GRAIN)
        align = GRAIN;
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    return bump(n, align, NO_CLASS);
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

void *pvalloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return memalign(pg, (n + pg - 1) & ~(pg - 1));
}
#endif
