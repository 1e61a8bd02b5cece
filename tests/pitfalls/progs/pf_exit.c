/* pf_exit.c -- pitfall 5: the process ends while other threads allocate.
 *
 * Four workers churn the heap forever.  argv[1] picks how the process ends:
 *   return  main returns 7 (an atexit handler allocates 2027-byte blocks
 *           while the workers keep going)
 *   _exit   a worker calls _exit(5)
 *   exit    a worker calls exit(6) while main also allocates
 *   quick   no workers: one 2029-byte block, main returns 3 at once
 *           (exit before the publisher thread has even started)
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_churn.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

enum { WORKERS = 4 };

static atomic_int g_never;
static const char *g_mode;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void at_exit(void)
{
    for (int i = 0; i < 3; i++)
        free(pf_escape(malloc(2027)));
}

static void *ender(void *arg)
{
    (void)arg;
    sleep_ms(200);
    if (strcmp(g_mode, "_exit") == 0)
        _exit(5);
    exit(6);
}

int main(int argc, char **argv)
{
    PF_CHECK(argc == 2, "usage: pf_exit return|_exit|exit");
    g_mode = argv[1];
    if (strcmp(g_mode, "quick") == 0) {
        free(pf_escape(malloc(2029)));
        return 3;
    }
    printf("mode %s\n", g_mode);
    fflush(stdout);
    PF_CHECK(atexit(at_exit) == 0, "atexit");
    static pf_churn_arg arg = {.stop = &g_never, .tag = 3};
    pthread_t t;
    for (int i = 0; i < WORKERS; i++)
        PF_CHECK(pthread_create(&t, NULL, pf_churn_thread, &arg) == 0, "pthread_create");
    if (strcmp(g_mode, "return") == 0) {
        sleep_ms(200);
        return 7;
    }
    PF_CHECK(pthread_create(&t, NULL, ender, NULL) == 0, "pthread_create");
    pf_churn c;
    pf_churn_init(&c, 4);
    for (;;)
        pf_churn_step(&c);
}
