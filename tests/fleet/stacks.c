/* stacks.c -- fleet-stacks: a target with more distinct backtraces than a
 * small trace table holds (tests/fleet/check_table_full.py).
 *
 * Allocation i goes through a call path that spells i in binary, one frame
 * per bit (a() for 1, b() for 0), so STACKS allocations have STACKS
 * distinct backtraces.  Every block stays live.  Then it writes READY and
 * holds its heap still until SIGTERM.
 *
 * Usage: fleet-stacks READY STACKS   (STACKS 1..65536).  Exit 0.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ESCAPE(p) __asm__ volatile("" : : "r"(p) : "memory")
#define BITS 16

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static void *walk(unsigned i, unsigned level);

static NOINLINE void *a(unsigned i, unsigned level)
{
    void *p = walk(i, level);
    ESCAPE(p);
    return p;
}

static NOINLINE void *b(unsigned i, unsigned level)
{
    void *p = walk(i, level);
    ESCAPE(p);
    return p;
}

static NOINLINE void *walk(unsigned i, unsigned level)
{
    if (level == BITS) {
        void *p = malloc(16);
        ESCAPE(p);
        return p;
    }
    void *p = (i >> level) & 1u ? a(i, level + 1) : b(i, level + 1);
    ESCAPE(p);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    if (n < 1 || n > (1l << BITS))
        return 2;
    signal(SIGTERM, on_term);
    for (long i = 0; i < n; i++)
        if (!walk((unsigned)i, 0))
            return 1;
    FILE *f = fopen(argv[1], "w");
    if (!f || fclose(f))
        return 1;
    while (!stop)
        pause();
    return 0;
}
