/* leaker.c -- fleet-leaker: a target for the exporter tests (tests/fleet).
 *
 * It leaks BLOCKS blocks of 4 KiB from leak_site() over about a second (so
 * that memtop sees growth), keeps 64 blocks of 1 KiB from keep_site(),
 * churns short-lived temporaries, then writes READY (unless "-") and holds
 * its heap still for HOLD seconds (0: until SIGTERM), so that every scrape
 * after READY sees the same live figures as memtop's JSON export.
 *
 * Usage: fleet-leaker READY|- [BLOCKS [HOLD]]   (defaults 100, 0).  Exit 0.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEAK_BYTES 4096
#define KEEP_BLOCKS 64
#define KEEP_BYTES 1024

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *leak_site(void)
{
    char *p = malloc(LEAK_BYTES);
    if (p)
        memset(p, 0x5a, LEAK_BYTES);
    return p;
}

static void *keep_site(void)
{
    char *p = malloc(KEEP_BYTES);
    if (p)
        memset(p, 0x33, KEEP_BYTES);
    return p;
}

static void churn(void)
{
    for (int i = 0; i < 10; i++) {
        char *t = malloc(100 + (size_t)i);
        if (t)
            t[0] = 1;
        free(t);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fleet-leaker READY|- [BLOCKS [HOLD]]\n");
        return 2;
    }
    long blocks = argc > 2 ? atol(argv[2]) : 100;
    double hold = argc > 3 ? atof(argv[3]) : 0;
    signal(SIGTERM, on_term);
    static void *kept[KEEP_BLOCKS];
    for (int i = 0; i < KEEP_BLOCKS; i++)
        kept[i] = keep_site();
    for (long i = 0; i < blocks && !stop; i++) {
        (void)leak_site(); /* the leak: never freed */
        churn();
        nap_ms(1000 / (blocks > 0 ? blocks : 1));
    }
    if (strcmp(argv[1], "-") != 0) {
        FILE *f = fopen(argv[1], "w");
        if (f)
            fclose(f);
    }
    for (double t = 0; !stop && (hold <= 0 || t < hold); t += 0.01)
        nap_ms(10);
    return kept[0] ? 0 : 1;
}
