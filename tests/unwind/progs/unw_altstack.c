/* unw_altstack.c -- allocations in a signal handler that runs on a small
 * alternate signal stack (sigaltstack, SA_ONSTACK), with an unmapped page
 * below it.  Walks through a signal frame are libunwind's, which needs
 * ~13 KB of stack: memtop must not overflow a smaller alternate stack.
 *
 * usage: unw_altstack STACK_BYTES N   (N handler runs, each malloc(4711)
 * and free) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define MARKER 4711

static void *volatile sink;
static volatile sig_atomic_t runs;

static void handler(int sig)
{
    (void)sig;
    void *p = malloc(MARKER);
    sink = p;
    free(p);
    runs++;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: unw_altstack STACK_BYTES N\n"), 2;
    size_t size = strtoul(argv[1], NULL, 0);
    int n = atoi(argv[2]);
    char *m = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) != 0)
        return perror("mmap"), 1;
    stack_t ss = {.ss_sp = m + 4096, .ss_size = size};
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return perror("sigaltstack"), 1;
    for (int i = 0; i < n; i++)
        raise(SIGUSR1);
    printf("handler allocations %d\n", (int)runs);
    return 0;
}
