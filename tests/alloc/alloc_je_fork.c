/* alloc_je_fork.c -- a program that loads libjemalloc with dlopen after
 * memtop started, then forks in a loop from its main thread while three
 * other threads allocate and free through that jemalloc, for tests/alloc
 * (check_je_fork.py).
 *
 * Why late: a jemalloc loaded after memtop registers its fork handler
 * after memtop's, so its handler runs first (they run in the reverse
 * order) and takes every jemalloc lock before memtop's fork_prepare waits
 * for the publish lock.  If memtop's publisher asked jemalloc for its
 * figures (mallctl, which takes jemalloc's locks) while holding that lock,
 * the fork and the publisher waited for each other for ever.  (A jemalloc
 * linked into the program, or its dependency, registers first: memtop's
 * handler runs first and the two never meet.)
 *
 * Forks argv[1] times (default 300); each child allocates, frees and
 * exits.  An alarm after 60 s (30 s in a child) ends the program with
 * "timeout" and exit status 3 (exit_group: no exit handler, which could
 * wait for the deadlocked locks), so that a deadlock is a failure and not
 * a hang.  Prints "ok" and exits 0; 2 if libjemalloc cannot be loaded. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static atomic_bool stop;
static void *(*je_mallocx)(size_t, int);
static void (*je_sdallocx)(void *, size_t, int);

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "timeout\n";
    ssize_t rc = write(1, msg, sizeof msg - 1);
    (void)rc;
    syscall(SYS_exit_group, 3);
}

static void *churn(void *arg)
{
    size_t n = (size_t)(uintptr_t)arg;
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        je_sdallocx(sink = je_mallocx(n, 0), n, 0);
        free(sink = malloc(n));
    }
    return NULL;
}

static bool fork_once(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30); /* alarms are not inherited */
        je_sdallocx(sink = je_mallocx(100, 0), 100, 0);
        _exit(0);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 300;
    signal(SIGALRM, on_alarm);
    alarm(60);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* memtop has started */
    void *h = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_LOCAL);
    je_mallocx = h ? (void *(*)(size_t, int))dlsym(h, "mallocx") : NULL;
    je_sdallocx = h ? (void (*)(void *, size_t, int))dlsym(h, "sdallocx") : NULL;
    if (!je_mallocx || !je_sdallocx) {
        fprintf(stderr, "libjemalloc.so.2: %s\n", h ? "no mallocx/sdallocx" : dlerror());
        return 2;
    }
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)(16 << (4 * i)));
    for (int i = 0; i < forks; i++)
        if (!fork_once()) {
            printf("fork %d failed\n", i);
            return 1;
        }
    atomic_store_explicit(&stop, true, memory_order_release);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    printf("ok\n");
    return 0;
}
