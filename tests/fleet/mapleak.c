/* mapleak.c -- fleet-mapleak: a target for check_pprof_mapping.py, linked
 * by lld (see CMakeLists.txt) so that its code's file offset is not its
 * address, as in Rust programs and most lld-linked ones.
 *
 * Its largest trace is strdup's (its innermost frame in libc, so that the
 * profile's first location is not the program's), then leak_site's
 * malloc; then it holds its heap for a second and exits 0.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COPY_BYTES 65536
#define COPIES 8
#define LEAKS 16

static char text[COPY_BYTES];
static void *kept[COPIES + LEAKS];

__attribute__((noinline)) static void *copy_site(void)
{
    return strdup(text);
}

__attribute__((noinline)) static void *leak_site(void)
{
    return malloc(4096);
}

int main(void)
{
    memset(text, 'x', sizeof text - 1);
    for (int i = 0; i < COPIES; i++)
        kept[i] = copy_site();
    for (int i = 0; i < LEAKS; i++)
        kept[COPIES + i] = leak_site();
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
    return kept[0] ? 0 : 1;
}
