/* pf_tls.c -- pitfall 1: first-touch TLS on many short-lived threads.
 *
 * Thousands of threads are created and joined in rounds.  Each one touches
 * a general-dynamic TLS variable of a dlopen'ed module (whose first access
 * goes through __tls_get_addr, which may malloc) and then allocates at
 * known sites with marker sizes the driver counts exactly:
 * 4093 bytes x3 (malloc) and 7 x 577 bytes (calloc) per thread.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

enum { ROUNDS = 250, PER_ROUND = 8, MALLOCS = 3 };

static __thread char g_local[64];
static int (*g_touch)(int);

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    memset(g_local, k, sizeof g_local);
    PF_CHECK(g_touch(k) == k, "module TLS broken");
    void *p[MALLOCS];
    for (int i = 0; i < MALLOCS; i++) {
        p[i] = malloc(4093);
        PF_CHECK(p[i] != NULL, "malloc failed");
        memset(p[i], k, 4093);
    }
    for (int i = 0; i < MALLOCS; i++)
        free(p[i]);
    void *c = calloc(7, 577);
    PF_CHECK(c != NULL && ((char *)c)[4038] == 0, "calloc failed");
    free(pf_escape(c));
    PF_CHECK(g_local[63] == (char)k, "TLS clobbered");
    if (k % 2)
        pthread_exit(arg);
    return arg;
}

int main(void)
{
    void *mod = dlopen(TLSMOD_PATH, RTLD_NOW | RTLD_LOCAL);
    PF_CHECK(mod != NULL, "dlopen: %s", dlerror());
    g_touch = (int (*)(int))dlsym(mod, "tlsmod_touch");
    PF_CHECK(g_touch != NULL, "dlsym failed");
    int total = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[PER_ROUND];
        for (int i = 0; i < PER_ROUND; i++)
            PF_CHECK(pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1)) == 0,
                     "pthread_create");
        for (int i = 0; i < PER_ROUND; i++) {
            void *ret;
            PF_CHECK(pthread_join(t[i], &ret) == 0 && ret == (void *)(long)(i + 1), "join");
            total++;
        }
    }
    printf("threads=%d malloc4093=%d calloc577x7=%d\n", total, total * MALLOCS, total);
    return 0;
}
