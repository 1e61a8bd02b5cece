/* pf_ctor.c -- pitfall 2: allocation before main and after it.
 *
 * Allocates from a .preinit_array function (runs before any shared
 * library's constructor, libmemtop's included), from constructors (one of
 * them high priority), from a linked library's constructor and destructor
 * (pf_ctor_lib.c), from an atexit handler and from a destructor.  Each site
 * uses its own marker size (see the driver).  Events are written with
 * write(2) so their order shows in stdout.  Exits with status 5.
 * With argv[1] = "hold", main also prints its pid and waits for EOF on
 * stdin (so the driver can look at the live segment).
 */
#include "pf_check.h"

#include <string.h>

int ctorlib_ready(void);

static int g_ready;

static void say(const char *s)
{
    ssize_t n = write(1, s, strlen(s));
    (void)n;
}

static void alloc_free(size_t size)
{
    char *p = malloc(size);
    PF_CHECK(p != NULL, "malloc(%zu) failed", size);
    memset(p, 1, size);
    free(pf_escape(p));
}

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    alloc_free(3001);
    say("preinit\n");
}
__attribute__((section(".preinit_array"), used)) static void (*g_preinit)(int, char **,
                                                                          char **) = preinit;

__attribute__((constructor(101))) static void ctor_early(void)
{
    alloc_free(3019);
    say("ctor 101\n");
}

__attribute__((constructor)) static void ctor_default(void)
{
    alloc_free(3023);
    g_ready = 1;
    say("ctor default\n");
}

static void at_exit(void)
{
    alloc_free(3037);
    say("atexit\n");
}

__attribute__((destructor)) static void dtor(void)
{
    alloc_free(3041);
    say("dtor\n");
}

int main(int argc, char **argv)
{
    PF_CHECK(g_ready && ctorlib_ready(), "constructors did not run");
    PF_CHECK(atexit(at_exit) == 0, "atexit");
    say("main\n");
    if (argc > 1 && strcmp(argv[1], "hold") == 0) {
        char buf[64];
        snprintf(buf, sizeof buf, "pid %d\n", (int)getpid());
        say(buf);
        while (read(0, buf, sizeof buf) > 0)
            ;
    }
    return 5;
}
