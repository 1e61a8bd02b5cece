/* unw_reuse.c -- allocation patterns for the own walker's replay of a thread's
 * previous walk (src/preload/unwind/unwind_memo.h).
 *
 * argv[1] picks the scenario; every allocation is freed at once:
 *   deep      one deep stack (40 frames) again and again
 *   shared    a shared outer part, inner parts chosen at random (two
 *             variants at four levels, as memtop-alloc-bench does)
 *   recurse   recursion of varying depth: the same CFAs reached under
 *             different inner depths
 *   callers   one function reached at the same CFA through two callers of
 *             equal frames, alternating (only the stack words tell them
 *             apart); prints "same_cfa 1" when the premise held
 *   altstack  on a thread whose stack lies right below an alternate
 *             signal stack: SIGUSR1 handlers allocating on the alternate
 *             stack interleaved with allocations on the normal one; then
 *             the alternate stack is unmapped and the thread allocates on
 *             (a replay that read a walk's old words without checking
 *             where they are would fault there)
 *   dlclose   on one thread: allocations through a dlopen'ed library,
 *             dlclose, then through the other build of it (argv[2],
 *             argv[3]); four times, each on a new thread
 *   threads   4 threads running deep, shared and recurse at once
 * Prints "done <scenario> <allocations>" and exits 0.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline, noclone))
#define KEEP() __asm__ volatile("" ::: "memory")

static _Atomic unsigned long g_allocs;
static volatile unsigned long g_sink;

static NOINLINE void alloc_here(size_t n)
{
    char *p = pf_escape(malloc(n));
    PF_CHECK(p != NULL, "malloc");
    p[0] = 1;
    free(pf_escape(p));
    g_allocs++;
}

/* A chain of n real frames (work after each call), malloc at the bottom. */
static NOINLINE unsigned long chain(int n, size_t size)
{
    if (n <= 0) {
        alloc_here(size);
        return 1;
    }
    unsigned long v = chain(n - 1, size);
    KEEP();
    return v * 3 + (unsigned long)n;
}

static void deep(int rounds)
{
    for (int i = 0; i < rounds; i++)
        chain(40, 24);
}

/* Two variants at four levels, chosen by the bits of path. */
#define LEVEL(name, next)                                                                          \
    static NOINLINE __attribute__((no_icf)) unsigned long name##_a(unsigned path, int lvl)         \
    {                                                                                              \
        unsigned long v = next(path, lvl + 1);                                                     \
        KEEP();                                                                                    \
        return v + 1;                                                                              \
    }                                                                                              \
    static NOINLINE __attribute__((no_icf)) unsigned long name##_b(unsigned path, int lvl)         \
    {                                                                                              \
        volatile char pad[48 * (lvl + 1)];                                                         \
        pad[0] = (char)lvl;                                                                        \
        unsigned long v = next(path, lvl + pad[0] - lvl + 1);                                      \
        KEEP();                                                                                    \
        return v + 2;                                                                              \
    }                                                                                              \
    static NOINLINE unsigned long name(unsigned path, int lvl)                                     \
    {                                                                                              \
        unsigned long v = (path >> lvl & 1) ? name##_b(path, lvl) : name##_a(path, lvl);           \
        KEEP();                                                                                    \
        return v * 5;                                                                              \
    }

static NOINLINE unsigned long leaf(unsigned path, int lvl)
{
    return chain(3 + (int)(path >> 4 & 3), 16 + lvl);
}

LEVEL(lvl3, leaf)
LEVEL(lvl2, lvl3)
LEVEL(lvl1, lvl2)
LEVEL(lvl0, lvl1)

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void shared(int rounds, unsigned seed)
{
    for (int i = 0; i < rounds; i++)
        g_sink += chain(6, 8) + lvl0(next_rand(&seed), 0);
}

static void recurse(int rounds)
{
    static const int depths[] = {5, 12, 3, 30, 7, 7, 1, 25, 0, 16, 2, 40, 9, 9, 9, 60};
    for (int i = 0; i < rounds; i++)
        chain(depths[i % (sizeof depths / sizeof depths[0])], 40);
}

/* One function reached at the same CFA through two callers. */
static uintptr_t g_cfa[2];

static NOINLINE unsigned long common_leaf(int who)
{
    volatile char here;
    g_cfa[who] = (uintptr_t)&here;
    alloc_here(32);
    KEEP();
    return (unsigned long)who;
}

static NOINLINE unsigned long common(int who)
{
    unsigned long v = common_leaf(who);
    KEEP();
    return v + 1;
}

#define CALLER(name, k)                                                                            \
    static NOINLINE __attribute__((no_icf)) unsigned long name(int who)                            \
    {                                                                                              \
        unsigned long v = common(who);                                                             \
        KEEP();                                                                                    \
        return v * (k);                                                                            \
    }
CALLER(caller_a, 7)
CALLER(caller_b, 11)

static void callers(int rounds)
{
    for (int i = 0; i < rounds; i++)
        g_sink += (i & 1) ? caller_b(1) : caller_a(0);
    printf("same_cfa %d\n", g_cfa[0] == g_cfa[1]);
}

/* altstack: the thread's stack and, right above it, its alternate stack. */
enum { THREAD_STACK = 1 << 20, ALT_STACK = 1 << 16, PAGE = 4096 };
static char *g_region;

static NOINLINE void handler_mid(void)
{
    chain(2, 48);
    KEEP();
}

static void on_usr1(int sig)
{
    (void)sig;
    volatile char here;
    uintptr_t h = (uintptr_t)&here, lo = (uintptr_t)g_region + THREAD_STACK + PAGE;
    if (h < lo || h >= lo + ALT_STACK)
        _exit(97); /* not on the alternate stack: the premise failed */
    handler_mid();
}

static void *altstack_thread(void *arg)
{
    (void)arg;
    stack_t ss = {.ss_sp = g_region + THREAD_STACK + PAGE, .ss_size = ALT_STACK};
    PF_CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack");
    for (int i = 0; i < 300; i++) {
        chain(i % 7, 8);
        PF_CHECK(raise(SIGUSR1) == 0, "raise");
        chain(4, 8);
    }
    stack_t off = {.ss_flags = SS_DISABLE};
    PF_CHECK(sigaltstack(&off, NULL) == 0, "sigaltstack off");
    PF_CHECK(munmap(g_region + THREAD_STACK + PAGE, ALT_STACK) == 0, "munmap");
    for (int i = 0; i < 300; i++)
        chain(i % 9, 8);
    return NULL;
}

static void altstack(void)
{
    size_t total = THREAD_STACK + PAGE + ALT_STACK;
    g_region = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    PF_CHECK(g_region != MAP_FAILED, "mmap");
    PF_CHECK(mprotect(g_region + THREAD_STACK, PAGE, PROT_NONE) == 0, "guard");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    pthread_attr_t attr;
    pthread_t t;
    PF_CHECK(pthread_attr_init(&attr) == 0, "attr");
    PF_CHECK(pthread_attr_setstack(&attr, g_region, THREAD_STACK) == 0, "setstack");
    PF_CHECK(pthread_create(&t, &attr, altstack_thread, NULL) == 0, "pthread_create");
    PF_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
}

/* dlclose between walks of one thread. */
typedef void *(*alloc_fn)(size_t);

static NOINLINE void through(const char *path, size_t size)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    PF_CHECK(h != NULL, "dlopen %s: %s", path, dlerror());
    alloc_fn fn = (alloc_fn)dlsym(h, "swap_alloc");
    PF_CHECK(fn != NULL, "dlsym");
    for (int i = 0; i < 3; i++) {
        free(pf_escape(fn(size)));
        g_allocs++;
    }
    PF_CHECK(dlclose(h) == 0, "dlclose");
}

/* One round per thread: libunwind, the reference in MEMTOP_UNWIND=check
 * mode, keeps a per-thread frame cache that dlclose does not invalidate,
 * and walks a thread's first 32 allocations without it (unwind_libunwind.c):
 * a round stays below that. */
static const char *g_libs[2];

static void *dlswap_round(void *arg)
{
    (void)arg;
    through(g_libs[0], 2001);
    chain(5, 8);
    through(g_libs[1], 2003);
    return NULL;
}

static void dlswap(const char *a, const char *b)
{
    g_libs[0] = a;
    g_libs[1] = b;
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        PF_CHECK(pthread_create(&t, NULL, dlswap_round, NULL) == 0, "pthread_create");
        PF_CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    }
}

static void *mixed(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 50; i++) {
        deep(3);
        shared(5, seed + (unsigned)i);
        recurse(5);
    }
    return NULL;
}

static void threads(void)
{
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        PF_CHECK(pthread_create(&t[i], NULL, mixed, (void *)(i + 1)) == 0, "pthread_create");
    for (int i = 0; i < 4; i++)
        PF_CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
}

int main(int argc, char **argv)
{
    PF_CHECK(argc >= 2, "usage: unw_reuse SCENARIO [LIB_A LIB_B]");
    const char *s = argv[1];
    if (strcmp(s, "deep") == 0)
        deep(2000);
    else if (strcmp(s, "shared") == 0)
        shared(3000, 1);
    else if (strcmp(s, "recurse") == 0)
        recurse(2000);
    else if (strcmp(s, "callers") == 0)
        callers(2000);
    else if (strcmp(s, "altstack") == 0)
        altstack();
    else if (strcmp(s, "dlclose") == 0 && argc == 4)
        dlswap(argv[2], argv[3]);
    else if (strcmp(s, "threads") == 0)
        threads();
    else
        PF_CHECK(0, "unknown scenario %s", s);
    printf("done %s %lu\n", s, (unsigned long)g_allocs);
    return 0;
}
