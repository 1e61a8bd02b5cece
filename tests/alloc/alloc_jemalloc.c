/* alloc_jemalloc.c -- a program on jemalloc (linked statically from
 * libjemalloc.a, or dynamically), using its standard and extended API
 * from named functions, for tests/alloc.
 *
 * Leaks, per function (bytes asked for):
 *   leak_malloc   malloc(1000)                         1000
 *   leak_calloc   calloc(10, 200)                      2000
 *   leak_mallocx  mallocx(3000, 0)                     3000
 *   leak_rallocx  mallocx(100) then rallocx to 4000    4000
 *   leak_xallocx  mallocx(65536) then xallocx to 32768  32768 (in place)
 * and frees ROUNDS blocks in each of the ways below (none stays live):
 * malloc+free, calloc+free, mallocx+dallocx, mallocx+sdallocx,
 * malloc+sdallocx, rallocx+sdallocx.  With an argument "threads" the
 * free loops also run on 4 threads at once; with "fork" a forked child
 * does the leaks, prints "child PID" and waits (up to 60 s, until
 * SIGTERM) for memtop -p, and the parent exits 0 after it.  Prints "ok"
 * and the xallocx result; exits 0. */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 1000
#define NOINLINE __attribute__((noinline))

static void *volatile sink[8];

NOINLINE static void leak_malloc(void)
{
    sink[0] = malloc(1000);
}

NOINLINE static void leak_calloc(void)
{
    sink[1] = calloc(10, 200);
}

NOINLINE static void leak_mallocx(void)
{
    sink[2] = mallocx(3000, 0);
}

NOINLINE static void leak_rallocx(void)
{
    void *p = mallocx(100, 0);
    sink[3] = rallocx(p, 4000, 0);
}

NOINLINE static size_t leak_xallocx(void)
{
    void *p = mallocx(65536, 0);
    size_t got = xallocx(p, 32768, 0, 0);
    sink[4] = p;
    return got;
}

NOINLINE static void free_all_ways(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        free(malloc(24 + (size_t)i % 64));
        free(calloc(3, 40));
        dallocx(mallocx(500, 0), 0);
        void *p = mallocx(700, 0);
        sdallocx(p, 700, 0);
        p = malloc(900);
        sdallocx(p, 900, 0);
        p = mallocx(50, 0);
        p = rallocx(p, 5000, 0);
        sdallocx(p, 5000, 0);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    free_all_ways();
    return NULL;
}

static size_t leaks(void)
{
    leak_malloc();
    leak_calloc();
    leak_mallocx();
    leak_rallocx();
    return leak_xallocx();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    free_all_ways();
    if (strcmp(mode, "threads") == 0) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, worker, NULL);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
    }
    size_t got = 0;
    if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            free_all_ways();
            got = leaks();
            printf("child %d %zu\n", (int)getpid(), got);
            fflush(stdout);
            sleep(60);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    got = leaks();
    printf("ok %zu\n", got);
    return 0;
}
