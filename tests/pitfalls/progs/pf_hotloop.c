/* pf_hotloop.c -- target for pitfall_syscalls: after a warm-up, 200,000
 * frees and allocations (16..4096 bytes, 64 blocks live, so that glibc's
 * heap does not grow) between two getsid(0) calls, the markers the driver
 * finds in strace's log.  With SYSCALL_EACH=1 in the environment it also
 * calls getuid() at every step: the driver's own check that it would see a
 * system call per allocation. */
#define _GNU_SOURCE
#include "pf_check.h"

#include <stdlib.h>
#include <unistd.h>

#define LIVE 64u
#define WARM 20000u
#define STEPS 200000u

static void churn(void **slot, unsigned steps, int each)
{
    for (unsigned i = 0; i < steps; i++) {
        unsigned k = (i * 2654435761u) % LIVE;
        free(slot[k]);
        slot[k] = malloc(16u + (i * 40503u) % 4081u);
        PF_CHECK(slot[k] != NULL, "malloc failed");
        if (each)
            (void)getuid();
    }
}

int main(void)
{
    void *slot[LIVE] = {0};
    const char *e = getenv("SYSCALL_EACH");
    int each = e && *e == '1';
    churn(slot, WARM, 0);
    (void)getsid(0); /* start marker: a call memtop never makes */
    churn(slot, STEPS, each);
    (void)getsid(0); /* end marker */
    for (unsigned k = 0; k < LIVE; k++)
        free(slot[k]);
    puts("pf_hotloop done");
    return 0;
}
