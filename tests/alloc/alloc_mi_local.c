/* alloc_mi_local.c -- loads the library given as argument (the test's
 * alloc_mi_local_lib, linked with libmimalloc) with dlopen RTLD_LOCAL, for
 * tests/alloc (check_mi_local.py): its constructor's mi_malloc, made
 * inside dlopen, and the one of lib_work, called afterwards, must succeed
 * under memtop as they do without it.  Prints "ok" and exits 0; prints
 * which call failed and exits 1; exits 2 if the library cannot be used.
 * A second argument "wait": sleeps 300 ms first (memtop's publisher is
 * polling by then). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 2 && !(argc == 3 && strcmp(argv[2], "wait") == 0))
        return 2;
    if (argc == 3) {
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    int (*ctor_ok)(void) = (int (*)(void))dlsym(h, "lib_ctor_ok");
    int (*work)(void) = (int (*)(void))dlsym(h, "lib_work");
    if (!ctor_ok || !work)
        return 2;
    if (!ctor_ok()) {
        printf("the constructor's mi_malloc failed\n");
        return 1;
    }
    if (!work()) {
        printf("lib_work's mi_malloc failed\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
