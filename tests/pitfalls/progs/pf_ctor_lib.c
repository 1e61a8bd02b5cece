/* pf_ctor_lib.c -- library for pitfall 2: allocates in its constructor
 * (3011 bytes freed at once, 3013 bytes kept until its destructor) and in
 * its destructor (3049 bytes). */
#include "pf_check.h"

#include <string.h>

static char *g_kept;

static void say(const char *s)
{
    ssize_t n = write(1, s, strlen(s));
    (void)n;
}

__attribute__((constructor)) static void lib_ctor(void)
{
    char *p = malloc(3011);
    PF_CHECK(p != NULL, "malloc failed");
    free(pf_escape(p));
    g_kept = malloc(3013);
    PF_CHECK(g_kept != NULL, "malloc failed");
    strcpy(g_kept, "kept");
    say("lib ctor\n");
}

__attribute__((destructor)) static void lib_dtor(void)
{
    char *p = malloc(3049);
    PF_CHECK(p != NULL, "malloc failed");
    free(pf_escape(p));
    free(g_kept);
    say("lib dtor\n");
}

int ctorlib_ready(void)
{
    return g_kept != NULL && strcmp(g_kept, "kept") == 0;
}
