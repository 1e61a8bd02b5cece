/* proctitle.c -- renames itself the way setproctitle does (redis, nginx,
 * postgres): the title written over the whole argv area, the rest of it
 * NUL-padded, so that /proc/PID/cmdline ends in NULs.  Then it allocates
 * a little every 20 ms until killed (check_proctitle.py).
 * Usage: proctitle READYFILE TITLE PADDING... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    char ready[4096], title[256];
    snprintf(ready, sizeof ready, "%s", argv[1]);
    snprintf(title, sizeof title, "%s", argv[2]);
    char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
    if ((size_t)(end - start) <= strlen(title))
        return 2;
    memset(start, 0, (size_t)(end - start));
    memcpy(start, title, strlen(title));
    FILE *f = fopen(ready, "w");
    if (!f)
        return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    for (int i = 0; i < 3000; i++) {
        volatile char *p = malloc(100);
        p[0] = 1;
        usleep(20000);
    }
    return 0;
}
