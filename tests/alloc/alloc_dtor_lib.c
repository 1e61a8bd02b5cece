/* alloc_dtor_lib.c -- a library memtop's allocator scan must take a
 * reference to but cannot hook (alloc_dtor_race.c, check_dtor_thread.sh).
 *
 * It has a jemalloc's signature (prefix fj_: mallctl, mallocx, sdallocx),
 * so the scan calls into it (classify) and takes a reference first
 * (alloc_scan.c take_ref); its mallctl refuses everything and its entries
 * are too short to redirect (4, 3 and 1 bytes), so memtop does not hook it and does not pin
 * it: the program's last dlclose must unload it, on the program's thread.
 * Its destructor says on which thread it runs. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl fj_mallctl\n.type fj_mallctl,@function\n"
        "fj_mallctl: push $22\n pop %rax\n ret\n.size fj_mallctl,.-fj_mallctl\n"
        ".globl fj_mallocx\n.type fj_mallocx,@function\n"
        "fj_mallocx: xor %eax,%eax\n ret\n.size fj_mallocx,.-fj_mallocx\n"
        ".globl fj_sdallocx\n.type fj_sdallocx,@function\n"
        "fj_sdallocx: ret\n.size fj_sdallocx,.-fj_sdallocx\n");
#endif

static void *block;

__attribute__((noinline)) void *dtor_lib_alloc(void)
{
    return malloc(777);
}

__attribute__((constructor)) static void init(void)
{
    block = dtor_lib_alloc();
}

__attribute__((destructor)) static void fini(void)
{
    free(block);
    block = NULL;
    if (syscall(SYS_gettid) != getpid())
        fprintf(stderr, "destructor on thread %ld, not the main thread\n",
                (long)syscall(SYS_gettid));
}
