/* pf_sigjump.c -- a signal handler left by siglongjmp while its free waits
 * in memtop's deferral queue (pf_sigjump.py).
 *
 * Its allocator is pf_sigbump.c (libc's names, linked in: memtop's real
 * allocator), which dies on a double free.  Run with
 * MEMTOP_TEST_DEFER_SIGNAL=SIGUSR2 (hook_nested.c: a handler's free that
 * may wait in the queue does, and SIGUSR2 is raised between its slot's
 * take and its write).  Each round arms the allocator to raise SIGUSR1 in
 * its next malloc, which memtop's malloc hook calls: the SIGUSR1 handler
 * runs inside memtop's real call, sets a jump point, allocates a block and
 * frees it; that free waits in the queue, and SIGUSR2's handler runs in
 * the middle of the push.  In round 1 it returns (the slot is written,
 * and the hook frees the block as it leaves); in round 2 it siglongjmps
 * back to the SIGUSR1 handler's jump point, which returns: the slot was
 * taken and never written.  The hook's drain once read it as it stood,
 * round 1's block, and freed that again (the allocator dies: "double
 * free", exit 97).  The round-2 block is never freed (the program never
 * finished its free): a leak, rightly.  Prints "ok ROUNDS JUMPS". */
#define _GNU_SOURCE
#include "pf_check.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>

void pf_sigbump_handler_enter(void);
void pf_sigbump_handler_leave(void);
void pf_sigbump_on_next_malloc(void (*fn)(void));

static sigjmp_buf g_env;
static volatile int g_round, g_frees, g_jumps;

static void on_usr2(int sig)
{
    (void)sig;
    if (g_round == 2) {
        g_jumps++;
        siglongjmp(g_env, 1);
    }
}

static void on_usr1(int sig)
{
    (void)sig;
    pf_sigbump_handler_enter();
    void *q = pf_escape(malloc(64));
    if (!q)
        _exit(98);
    if (sigsetjmp(g_env, 1) == 0) {
        free(q);
        g_frees++;
    }
    pf_sigbump_handler_leave();
}

static void raise_usr1(void)
{
    raise(SIGUSR1);
}

static void install(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    PF_CHECK(sigaction(sig, &sa, NULL) == 0, "sigaction");
}

int main(void)
{
    install(SIGUSR1, on_usr1);
    install(SIGUSR2, on_usr2);
    free(pf_escape(malloc(32))); /* tracking starts */
    for (g_round = 1; g_round <= 2; g_round++) {
        pf_sigbump_on_next_malloc(raise_usr1);
        void *p = pf_escape(malloc(100));
        PF_CHECK(p, "malloc");
        free(p);
    }
    free(pf_escape(malloc(32))); /* a hook that drains again */
    printf("ok %d %d\n", g_frees, g_jumps);
    return 0;
}
