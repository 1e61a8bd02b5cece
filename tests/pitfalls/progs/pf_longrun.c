/* pf_longrun.c -- target for the viewer-misbehaviour pitfall (11).
 *
 * Writes its pid to argv[1], then churns the heap on two threads until its
 * stdin reaches EOF (at most 60 s), frees everything, prints a
 * deterministic line and exits 0.
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_churn.h"

#include <pthread.h>
#include <time.h>

static atomic_int g_stop;

static void *stdin_watch(void *arg)
{
    (void)arg;
    char buf[64];
    while (read(0, buf, sizeof buf) > 0)
        ;
    atomic_store(&g_stop, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    PF_CHECK(argc == 2, "usage: pf_longrun PIDFILE");
    FILE *f = fopen(argv[1], "w");
    PF_CHECK(f != NULL, "cannot write %s", argv[1]);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    pthread_t w, c;
    pf_churn_arg arg = {.stop = &g_stop, .tag = 5, .release = 1};
    PF_CHECK(pthread_create(&w, NULL, stdin_watch, NULL) == 0, "pthread_create");
    PF_CHECK(pthread_create(&c, NULL, pf_churn_thread, &arg) == 0, "pthread_create");
    time_t end = time(NULL) + 60;
    pf_churn mine;
    pf_churn_init(&mine, 6);
    while (!atomic_load(&g_stop) && time(NULL) < end) {
        for (int i = 0; i < 1000; i++)
            pf_churn_step(&mine);
        usleep(1000);
    }
    atomic_store(&g_stop, 1);
    PF_CHECK(pthread_join(c, NULL) == 0, "join");
    pf_churn_release(&mine);
    printf("longrun ok\n");
    return 0;
}
