/* pf_sigthrow.cpp -- a signal handler's throwing operator new while the
 * thread is inside memtop (pf_sigthrow.py).
 *
 * The program's allocator is a "mimalloc" of its own (pf_sigthrow_mi.cpp),
 * whose API memtop hooks.  It prints "ready PID", waits for a line, then
 * lets a thread make its first allocation: memtop gives the thread its
 * record there (core_thread_state.c set_key), calling pthread_setspecific,
 * which this program defines so that it raises SIGUSR1 at that moment: the
 * handler runs inside memtop's hook (MT_IN_HOOK).  The handler calls
 * mi_new for a size it cannot have and catches std::bad_alloc, thrown
 * through memtop's hook; then it asks the allocator for a block of its own
 * (pf_sigthrow_own: mimalloc calling its mi_malloc by name) and frees it.
 * That block is the program's, counted as untracked, its free as an
 * unknown one; memtop once left the thread saying MT_IN_REAL after the
 * throw, took the block for the allocator's own and counted it nowhere
 * (a debug build's assertion fired as the hook went on).  Then the handler
 * resizes a tracked block in place (mi_expand, 777 to 700 bytes) and
 * destroys a heap of three tracked 555-byte blocks: the resized block's
 * record is freed and the block untracked, the heap's blocks and record
 * freed (they once kept their records: live, at their old size).  The exception
 * object libstdc++ allocates is likewise untracked, its free unknown: the
 * driver checks that the two counts grew alike (main throws once before
 * "ready", so that the unwinder's first-use allocations, never freed, fall
 * outside the window).  Then it prints "done N"
 * (N: handlers run) and waits for stdin to close. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>

extern "C" {
void *mi_malloc(size_t n);
void mi_free(void *p);
void *mi_new(size_t n);
void *pf_sigthrow_own(size_t n);
void *mi_expand(void *p, size_t n);
void *mi_heap_new(void);
void *mi_heap_malloc(void *h, size_t n);
void mi_heap_destroy(void *h);
}

/* Made by main before "ready" (tracked): a block the handler resizes in
 * place, and a heap of HEAP_BLOCKS blocks it destroys. */
enum { RESIZED_SIZE = 777, HEAP_BLOCK_SIZE = 555, HEAP_BLOCKS = 3 };
static void *g_resized, *g_heap;

static volatile sig_atomic_t g_caught, g_handled;

static void on_usr1(int)
{
    try {
        void *p = mi_new((size_t)1 << 40);
        mi_free(p);
    } catch (const std::bad_alloc &) {
        g_caught = 1;
    }
    void *q = pf_sigthrow_own(48);
    if (!q)
        _exit(98);
    std::memset(q, 0x5a, 48);
    mi_free(q);
    if (mi_expand(g_resized, RESIZED_SIZE - 77) != g_resized)
        _exit(97);
    mi_heap_destroy(g_heap);
    g_handled = g_handled + 1;
}

/* memtop's call as the thread gets its record lands here first (the
 * program's definition comes first in the lookup scope). */
static int (*g_real_setspecific)(pthread_key_t, const void *);
static volatile int g_raise; /* the thread only */

extern "C" int pthread_setspecific(pthread_key_t key, const void *value) noexcept
{
    if (g_raise) {
        g_raise = 0;
        raise(SIGUSR1);
    }
    if (!g_real_setspecific)
        g_real_setspecific =
            (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    return g_real_setspecific(key, value);
}

static int g_go[2], g_ack[2];

static void *first_hook_thread(void *)
{
    char c;
    if (read(g_go[0], &c, 1) != 1)
        _exit(96);
    g_raise = 1;
    void *p = mi_malloc(100); /* the thread's first hook: its record */
    if (!p)
        _exit(98);
    mi_free(p);
    if (write(g_ack[1], "a", 1) != 1)
        _exit(96);
    while (read(g_go[0], &c, 1) > 0) /* never exits: no frees at a join */
        ;
    return nullptr;
}

int main()
{
    g_real_setspecific =
        (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    if (!g_real_setspecific || sigaction(SIGUSR1, &sa, nullptr) != 0 || pipe(g_go) != 0 ||
        pipe(g_ack) != 0)
        return 96;
    /* A first throw through memtop's hook before "ready": the unwinder's
     * own first-use allocations (libgcc's) are not counted in the window. */
    try {
        mi_free(mi_new((size_t)1 << 40));
        return 96;
    } catch (const std::bad_alloc &) {
    }
    g_resized = mi_malloc(RESIZED_SIZE);
    g_heap = mi_heap_new();
    if (!g_resized || !g_heap)
        return 96;
    for (int i = 0; i < HEAP_BLOCKS; i++)
        if (!mi_heap_malloc(g_heap, HEAP_BLOCK_SIZE))
            return 96;
    pthread_t th;
    if (pthread_create(&th, nullptr, first_hook_thread, nullptr) != 0)
        return 96;
    std::printf("ready %d\n", (int)getpid());
    std::fflush(stdout);
    char c;
    if (read(0, &c, 1) != 1)
        return 96;
    if (write(g_go[1], "g", 1) != 1 || read(g_ack[0], &c, 1) != 1)
        return 96;
    char line[64];
    int n = std::snprintf(line, sizeof line, "done %d %d\n", (int)g_handled, (int)g_caught);
    if (write(1, line, (size_t)n) != n)
        return 96;
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
