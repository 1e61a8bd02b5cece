/* thread_churn.c -- threads that allocate and exit, three that stay, and
 * a forked child (check_threads.py): 50 threads each allocate and are
 * joined, one after the other; then 3 threads allocate and wait; then the
 * main thread forks a child that allocates and sleeps.  The process then
 * has 4 threads that allocated (main and the 3), the child 1.
 * Usage: thread_churn READYFILE (gets "PARENTPID CHILDPID"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *churn(void *arg)
{
    (void)arg;
    volatile char *p = malloc(64);
    p[0] = 1;
    free((void *)p);
    return NULL;
}

static void *stay(void *arg)
{
    (void)arg;
    volatile char *p = malloc(64);
    p[0] = 1;
    sleep(120);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    for (int i = 0; i < 50; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, churn, NULL) || pthread_join(t, NULL))
            return 1;
    }
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, stay, NULL))
            return 1;
    }
    usleep(200000); /* the three have allocated */
    pid_t child = fork();
    if (child == 0) {
        volatile char *p = malloc(100);
        p[0] = 1;
        sleep(120);
        _exit(0);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d %d\n", (int)getpid(), (int)child) < 0 || fclose(f) ||
        rename(tmp, argv[1]))
        return 1;
    sleep(120);
    return 0;
}
