/* pf_simple.c -- a plain, deterministic allocating program for the
 * environment-robustness pitfall (10).  argv[1]: milliseconds to stay
 * alive at the end (so the driver can look for a segment); exits with 4.
 */
#include "pf_check.h"

#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i <= 1000; i++) {
        char *p = malloc((size_t)i * 3);
        PF_CHECK(p != NULL, "malloc");
        memset(p, 1, (size_t)i * 3);
        total += p[i - 1];
        free(p);
    }
    printf("simple total=%ld\n", total);
    fflush(stdout);
    long ms = argc > 1 ? atol(argv[1]) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return 4;
}
