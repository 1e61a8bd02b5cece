/* alloc_dtor_race.c -- loads a library (alloc_dtor_lib.c) with dlopen and
 * closes it at once while two threads call dlsym in a loop: each dlsym
 * runs memtop's allocator scan, which may be holding a reference to the
 * new library (alloc_scan.c take_ref) when the program's dlclose comes.
 * That dlclose must still be the last one, so that the library's
 * destructor runs on this thread (check_dtor_thread.sh).
 * Usage: alloc_dtor_race LIBRARY */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int stop;

static void *symmer(void *arg)
{
    (void)arg;
    while (!stop)
        (void)dlsym(RTLD_DEFAULT, "puts");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
        return 2;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, symmer, NULL);
    usleep(1000);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    dlclose(h); /* the last: the destructor runs here */
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
