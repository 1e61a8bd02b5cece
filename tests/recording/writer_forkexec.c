/* writer_forkexec.c -- a workload for test_writer_forkexec.py: threads,
 * fork, vfork+exec and exec under MEMTOP_RECORD.
 *
 * Stage 1: 4 threads each make THREAD_ALLOCS malloc/free pairs (and a
 * realloc); fork a child that makes CHILD_ALLOCS allocations and exits;
 * vfork + exec /bin/true (the vfork child must not touch the parent's
 * recording); then exec itself as stage 2.  Stage 2: STAGE2_ALLOCS
 * allocations, then _exit(0) (which finalizes without destructors).
 *
 * Usage: writer_forkexec [stage2]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define THREAD_ALLOCS 5000
#define CHILD_ALLOCS 300
#define STAGE2_ALLOCS 200

static void *worker(void *arg)
{
    size_t size = 16 + (size_t)(long)arg;
    for (int i = 0; i < THREAD_ALLOCS; i++) {
        char *volatile p = malloc(size);
        p[0] = 1;
        free(p);
    }
    char *volatile q = malloc(10);
    q[0] = 1;
    q = realloc(q, 1000);
    q[999] = 1;
    free(q);
    return NULL;
}

static int stage2(void)
{
    static void *keep[STAGE2_ALLOCS];
    for (int i = 0; i < STAGE2_ALLOCS; i++)
        keep[i] = malloc(100);
    fflush(stdout);
    _exit(keep[0] ? 0 : 1);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stage2") == 0)
        return stage2();
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pid_t c = fork();
    if (c == 0) {
        for (int i = 0; i < CHILD_ALLOCS; i++) {
            char *volatile p = malloc(64);
            p[0] = 1;
            free(p);
        }
        exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 2;
    pid_t v = vfork();
    if (v == 0) {
        char *args[] = {"/bin/true", NULL};
        execv(args[0], args);
        _exit(127);
    }
    waitpid(v, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 3;
    printf("child %d\n", (int)c);
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "stage2", (char *)NULL);
    return 4;
}
