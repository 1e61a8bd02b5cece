/* alloc_mi_late.c -- loads libmimalloc with dlopen after start while
 * other threads run (two allocate and free through malloc in a loop, one
 * sleeps in nanosleep), for tests/alloc: memtop must redirect the late
 * library's entry points with those threads stopped for a moment
 * (docs/allocators.md, "When"), before the program gets a pointer to them
 * with dlsym, and count its blocks exactly.  Leaks 1000 bytes from
 * leak_late() (mi_malloc, through a pointer from dlsym, which bypasses
 * the PLT); frees the 2000 blocks main allocates with mi_malloc and
 * mi_zalloc through mi_free.  Waits 300 ms (several polls of memtop's
 * publisher), stops the threads (the sleeper with SIGUSR1), prints
 * "loaded"; exits 0.  With argv[1]
 * "renamed", one more sleeper names itself memtop-publish (memtop's own
 * threads are not stopped: by their thread ids, not their names), and
 * the program prints instead how many of each sleeper's naps the stop
 * interrupted: "eintr plain N renamed M".  With argv[1] "smallstack",
 * one more thread sleeps on a 16 KiB coroutine stack (guard page below)
 * with about 1 KiB of it left, less than a signal frame needs, after
 * giving itself an alternate signal stack (sigaltstack), as Rust's and
 * Go's threads have one: the stop's signal must be taken on that stack
 * (SA_ONSTACK), or the kernel kills the program with SIGSEGV.  With
 * argv[1] "waitdlsym", main waits 200 ms between its dlopen and its first
 * dlsym (the publisher's poll finds libmimalloc first: the tests hold that
 * scan with MEMTOP_TEST_SCAN_LOADER_WAIT_MS or MEMTOP_TEST_SCAN_HOLD_MS),
 * and 2 s instead of 300 ms at the end.  Linked with -z now: a lazy
 * binding's resolver would need more stack too. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static void *volatile sink;
static atomic_bool stop;
static void *(*p_malloc)(size_t);
static void *(*p_zalloc)(size_t);
static void (*p_free)(void *);

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        free(sink = malloc(64));
    return NULL;
}

static atomic_int eintr[2];       /* naps interrupted before the end: plain sleeper, renamed one */
static atomic_int sleeper_tid[2]; /* plain, renamed; 0 until about to sleep */

/* Whether thread tid is asleep (state S in its /proc stat): a sleeper
 * that stored its tid sleeps nowhere but in its nanosleep. */
static int asleep(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] == 'S';
}

static void on_wake(int sig)
{
    (void)sig;
}

/* Sleeps in long naps until main wakes it (SIGUSR1) at the end, so that
 * a stop signal finds it inside nanosleep (which is never restarted:
 * EINTR) even on a loaded machine. */
static void *sleeper(void *arg)
{
    const char *name = arg;
    if (name)
        prctl(PR_SET_NAME, name);
    struct timespec ts = {10, 0};
    atomic_store_explicit(&sleeper_tid[name != NULL], (int)syscall(SYS_gettid),
                          memory_order_release);
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR &&
            !atomic_load_explicit(&stop, memory_order_acquire))
            atomic_fetch_add_explicit(&eintr[name != NULL], 1, memory_order_relaxed);
    return NULL;
}

#define CO_STACK 16384
static ucontext_t co_main, co_ctx;

__attribute__((noinline)) static void co_sleep(void)
{
    struct timespec ts = {0, 20000000};
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        nanosleep(&ts, NULL);
}

static void co_entry(void)
{
    volatile char pad[CO_STACK - 1024]; /* all but about 1 KiB of the stack */
    pad[0] = 0;
    co_sleep();
    pad[sizeof pad - 1] = 0;
}

static void *tight(void *arg)
{
    (void)arg;
    stack_t ss = {.ss_size = 65536};
    ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *mem =
        mmap(NULL, 4096 + CO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED || mem == MAP_FAILED || sigaltstack(&ss, NULL) != 0 ||
        mprotect(mem, 4096, PROT_NONE) != 0 || getcontext(&co_ctx) != 0)
        abort();
    co_ctx.uc_stack.ss_sp = mem + 4096;
    co_ctx.uc_stack.ss_size = CO_STACK;
    co_ctx.uc_link = &co_main;
    makecontext(&co_ctx, co_entry, 0);
    swapcontext(&co_main, &co_ctx);
    return NULL;
}

__attribute__((noinline)) static void leak_late(void)
{
    sink = p_malloc(1000);
}

int main(int argc, char **argv)
{
    int renamed = argc > 1 && strcmp(argv[1], "renamed") == 0;
    int small = argc > 1 && strcmp(argv[1], "smallstack") == 0;
    int waitdlsym = argc > 1 && strcmp(argv[1], "waitdlsym") == 0;
    pthread_t th[4];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_wake; /* no SA_RESTART: ends a nap */
    sigaction(SIGUSR1, &sa, NULL);
    pthread_create(&th[0], NULL, churn, NULL);
    pthread_create(&th[1], NULL, churn, NULL);
    pthread_create(&th[2], NULL, sleeper, NULL);
    if (renamed)
        pthread_create(&th[3], NULL, sleeper, "memtop-publish");
    if (small)
        pthread_create(&th[3], NULL, tight, NULL);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);                /* memtop has started, the threads run */
    for (int i = 0; i <= renamed; i++) { /* the sleepers sleep */
        int tid;
        while (!(tid = atomic_load_explicit(&sleeper_tid[i], memory_order_acquire)) || !asleep(tid))
            nanosleep(&ts, NULL);
    }
    void *h = dlopen("libmimalloc.so.2", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    ts.tv_nsec = 200000000;
    if (waitdlsym)
        nanosleep(&ts, NULL);
    p_malloc = (void *(*)(size_t))dlsym(h, "mi_malloc");
    p_zalloc = (void *(*)(size_t))dlsym(h, "mi_zalloc");
    p_free = (void (*)(void *))dlsym(h, "mi_free");
    if (!p_malloc || !p_zalloc || !p_free)
        return 1;
    for (int i = 0; i < 1000; i++) {
        p_free(p_malloc(100));
        p_free(p_zalloc(300));
    }
    leak_late();
    ts.tv_nsec = 300000000;
    if (waitdlsym) {
        ts.tv_sec = 2;
        ts.tv_nsec = 0;
    }
    nanosleep(&ts, NULL);
    atomic_store_explicit(&stop, true, memory_order_release);
    pthread_kill(th[2], SIGUSR1);
    if (renamed)
        pthread_kill(th[3], SIGUSR1);
    for (int i = 0; i < 3 + renamed + small; i++)
        pthread_join(th[i], NULL);
    if (renamed)
        printf("eintr plain %d renamed %d\n", atomic_load(&eintr[0]), atomic_load(&eintr[1]));
    else
        printf("loaded\n");
    return 0;
}
