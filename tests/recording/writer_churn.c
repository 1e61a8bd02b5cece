/* writer_churn.c -- target of test_writer_churn.py: many short-lived
 * threads, one alive at a time, while a recording runs (rings of exited
 * threads must be recycled at once, and unmapped beyond a few free ones).
 *
 * Usage: writer_churn N
 * Thread i allocates and frees a block of size S = 100000 + 4 i; then, in
 * a pthread key destructor that runs after memtop's own (a later key), a
 * block of S + 1 and, from a SIGUSR1 handler it raises there, S + 2: the
 * events of an exiting thread after its ring was retired.  Prints
 * "thread TID S" per thread, then "vm BEFORE_KB AFTER_KB": VmSize before
 * the threads and after them, once it stops shrinking (up to 3 s: the
 * recorder recycles asynchronously). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_key_t g_key;
static __thread size_t tls_size;
static int *g_tids;

static void one_block(size_t n)
{
    void *volatile p = malloc(n);
    free(p);
}

static void on_usr1(int sig)
{
    (void)sig;
    one_block(tls_size + 2);
}

static void at_exit_key(void *arg)
{
    (void)arg;
    one_block(tls_size + 1);
    raise(SIGUSR1);
}

static void *one(void *arg)
{
    size_t i = (size_t)arg;
    tls_size = 100000 + 4 * i;
    g_tids[i] = (int)syscall(SYS_gettid);
    one_block(tls_size);
    pthread_setspecific(g_key, (void *)1);
    return NULL;
}

static long vm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0)
            kb = atol(line + 7);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    g_tids = calloc((size_t)n, sizeof *g_tids);
    pthread_key_create(&g_key, at_exit_key);
    signal(SIGUSR1, on_usr1);
    long before = vm_kb();
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, one, (void *)(size_t)i) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    long after = vm_kb();
    for (int k = 0; k < 30; k++) {
        usleep(100000);
        long now = vm_kb();
        if (now >= after)
            break;
        after = now;
    }
    for (int i = 0; i < n; i++)
        printf("thread %d %zu\n", g_tids[i], (size_t)(100000 + 4 * (size_t)i));
    printf("vm %ld %ld\n", before, after);
    free(g_tids);
    return 0;
}
