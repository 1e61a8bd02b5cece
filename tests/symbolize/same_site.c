/* same_site.c -- one helper that allocates (make_label), called from
 * several places: traces that share one location, which memtop's rows must
 * tell apart by their callers (check_same_site.py).
 *
 *   parse_config -> make_label            one caller each: rows
 *   load_plugins -> make_label            "make_label <- parse_config", ...
 *   start_a -> via_table -> make_label    a shared caller: told apart one
 *   start_b -> via_table -> make_label    frame further out
 *   lone_site                             its own location: no caller
 *
 * Built -O0 -g (by check_same_site.py; as memtop-same-site for the viewer's
 * test, tests/tui/check_same_site.py); every block stays live until exit so
 * each trace is a row of the exit report.  Argument: seconds to stay
 * alive after allocating (default 0). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *keep[64];
static int kept;

__attribute__((noinline)) static char *make_label(const char *s)
{
    char *p = malloc(strlen(s) + 100);
    if (p)
        strcpy(p, s);
    return p;
}

__attribute__((noinline)) static void parse_config(void)
{
    keep[kept++] = make_label("config");
}

__attribute__((noinline)) static void load_plugins(void)
{
    keep[kept++] = make_label("plugins");
}

__attribute__((noinline)) static void via_table(const char *s)
{
    keep[kept++] = make_label(s);
}

__attribute__((noinline)) static void start_a(void)
{
    via_table("a");
}

__attribute__((noinline)) static void start_b(void)
{
    via_table("b");
}

__attribute__((noinline)) static void lone_site(void)
{
    keep[kept++] = malloc(4000);
}

int main(int argc, char **argv)
{
    parse_config();
    load_plugins();
    start_a();
    start_b();
    lone_site();
    if (argc > 1)
        sleep((unsigned)atoi(argv[1]));
    return keep[0] == NULL; /* the blocks stay live: rows at exit */
}
