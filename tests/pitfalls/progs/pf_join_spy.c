/* pf_join_spy.c -- a preload placed before libmemtop.so that reports every
 * pthread_timedjoin_np on stderr ("spy-join"), then calls the real one.
 *
 * libmemtop.so joins its publisher thread through pthread_timedjoin_np
 * (publish_thread.c stop_thread), bound at load: preloaded first, this
 * definition is the one it binds.  Test pitfall_exit_join: a short process
 * (and a shell's fork child at its exec) ends with its publisher still in
 * its first wait, so it must not wake and join it; one whose publisher is
 * past that wait (MEMTOP_START_MS=0) still does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

int pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *until)
{
    static const char tag[] = "spy-join\n";
    (void)!write(2, tag, sizeof tag - 1);
    int (*next)(pthread_t, void **, const struct timespec *) =
        (int (*)(pthread_t, void **, const struct timespec *))dlsym(RTLD_NEXT,
                                                                    "pthread_timedjoin_np");
    return next ? next(t, ret, until) : 0;
}
