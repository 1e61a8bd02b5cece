/* writer_pause_probe.c -- target for test_writer_start_io_after_pause.py: does
 * the recorder write to its file while allocation calls wait at the gate
 * of a mid-run start?  This executable defines write(), which libmemtop's
 * calls resolve to (an executable's symbols come first).  On each write to
 * a .dat file, it asks a probe thread to malloc+free and waits up to 1 s:
 * if the probe does not get through, the write happened during the pause
 * (counted; probing then stops).  N live blocks (argv[1]) make the initial
 * state large; the program prints its pid, runs argv[2] seconds and prints
 * "probes P blocked B". */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic unsigned g_request, g_done;
static _Atomic int g_blocked, g_probes;

static void *probe(void *arg)
{
    (void)arg;
    for (;;) {
        unsigned want = g_request;
        if (want != g_done) {
            void *volatile p = malloc(32);
            free(p);
            g_done = want;
        }
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int is_dat(int fd)
{
    char link[64], path[512];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = syscall(SYS_readlink, link, path, sizeof path - 1);
    if (n < 4)
        return 0;
    path[n] = '\0';
    return strcmp(path + n - 4, ".dat") == 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd > 2 && !g_blocked && is_dat(fd)) {
        unsigned want = ++g_request;
        g_probes++;
        for (int i = 0; i < 20000 && g_done != want; i++) {
            struct timespec ts = {0, 50000};
            syscall(SYS_nanosleep, &ts, NULL);
        }
        if (g_done != want)
            g_blocked++;
    }
    return syscall(SYS_write, fd, buf, n);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int secs = argc > 2 ? atoi(argv[2]) : 4;
    void **keep = malloc((size_t)n * sizeof *keep);
    for (long i = 0; i < n; i++)
        keep[i] = malloc(16 + (size_t)(i & 63));
    pthread_t t;
    pthread_create(&t, NULL, probe, NULL);
    printf("%d\n", (int)getpid());
    fflush(stdout);
    sleep((unsigned)secs);
    printf("probes %d blocked %d\n", g_probes, g_blocked);
    fflush(stdout);
    for (long i = 0; i < n; i++)
        free(keep[i]);
    free(keep);
    return 0;
}
