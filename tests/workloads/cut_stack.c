/* cut_stack.c -- memtop-cut-stack: allocations whose backtrace cannot be
 * walked past their first frame.  Built without unwind tables and without
 * frame pointers (tests/workloads/CMakeLists.txt), so a stack walker stops
 * in lvl3, the function that calls malloc: the viewer must say that the
 * backtrace ends there, not at the program's start
 * (tests/tui/check_cut_stack.py).  Usage: memtop-cut-stack [SECONDS]. */
#include <stdlib.h>
#include <unistd.h>

/* Three frames that stay frames (noinline) and keep their blocks live. */
__attribute__((noinline)) static void *lvl3(int n)
{
    void *p = malloc((size_t)n);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *lvl2(int n)
{
    void *p = lvl3(n + 1);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void *lvl1(int n)
{
    void *p = lvl2(n + 1);
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 5;
    for (int i = 0; i < secs * 10; i++) {
        if (!lvl1(100))
            return 1;
        usleep(100000);
    }
    return 0;
}
