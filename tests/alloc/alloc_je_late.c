/* alloc_je_late.c -- loads a library with its own jemalloc linked in
 * (alloc_je_late_lib.c, path in argv[1]) with dlopen after start while
 * two threads allocate and free through malloc and one sleeps, for
 * tests/alloc/check_je_late.py.  Then calls the library's lj_work (known
 * leaks from named functions, everything else freed) from main and from
 * 3 more threads (argv[2] "threads"), or from main and a fork child
 * (argv[2] "fork": the child prints "child PID" and waits to be killed),
 * or loads it by a relative path (argv[2] "relative": from its directory,
 * as "./name").  Prints "ok"; exits 0. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static atomic_bool stop;
static void (*p_work)(void);

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        free(sink = malloc(64));
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 20000000};
    while (!atomic_load_explicit(&stop, memory_order_acquire))
        nanosleep(&ts, NULL);
    return NULL;
}

static void *worker(void *arg)
{
    (void)arg;
    p_work();
    return NULL;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&ts, NULL);
}

static int fork_child(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        p_work();
        printf("child %d\n", (int)getpid());
        fflush(stdout);
        for (;;)
            pause();
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    bool threads = argc > 2 && strcmp(argv[2], "threads") == 0;
    bool forks = argc > 2 && strcmp(argv[2], "fork") == 0;
    pthread_t th[3], wk[3];
    pthread_create(&th[0], NULL, churn, NULL);
    pthread_create(&th[1], NULL, churn, NULL);
    pthread_create(&th[2], NULL, sleeper, NULL);
    nap_ms(50); /* memtop has started, the threads run */
    const char *path = argv[1];
    if (argc > 2 && strcmp(argv[2], "relative") == 0) {
        static char rel[4096];
        const char *slash = strrchr(path, '/');
        if (slash) {
            snprintf(rel, sizeof rel, "%.*s", (int)(slash - path), path);
            if (chdir(rel) != 0)
                return 1;
            snprintf(rel, sizeof rel, "./%s", slash + 1);
            path = rel;
        }
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    p_work = (void (*)(void))dlsym(h, "lj_work");
    if (!p_work)
        return 1;
    if (forks) {
        atomic_store_explicit(&stop, true, memory_order_release);
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
        return fork_child();
    }
    if (threads)
        for (int i = 0; i < 3; i++)
            pthread_create(&wk[i], NULL, worker, NULL);
    p_work();
    if (threads)
        for (int i = 0; i < 3; i++)
            pthread_join(wk[i], NULL);
    nap_ms(100);
    atomic_store_explicit(&stop, true, memory_order_release);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    printf("ok\n");
    return 0;
}
