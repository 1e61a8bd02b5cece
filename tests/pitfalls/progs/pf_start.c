/* pf_start.c -- the deferred start of publishing (publish_thread.c, "Short
 * processes"), for pf_start.py.
 *
 *   pf_start short          7 blocks of 1019 bytes, 5 freed; prints its lowest
 *                           free descriptor and exits at once (3)
 *   pf_start idle PIDFILE   20 live blocks of 1013 bytes, then writes its pid
 *                           and waits for a line on stdin without allocating
 *                           (a long-lived process that is idle after start)
 *   pf_start exec PIDFILE   writes its pid, waits for a line, then execs
 *                           `pf_start idle PIDFILE` with MEMTOP_START_MS=3600000
 *   pf_start execfail PIDFILE  an exec that fails (ENOENT) at once, within
 *                           MEMTOP_START_MS, then as `idle`
 * Prints one line on stdout per run.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static void *keep[20];

static void write_pid(const char *path)
{
    FILE *f = fopen(path, "w");
    PF_CHECK(f != NULL, "cannot write %s", path);
    fprintf(f, "%d\n", (int)getpid());
    PF_CHECK(fclose(f) == 0, "close %s", path);
}

/* A line on stdin, read with read(2): stdio would allocate its buffer. */
static void wait_line(void)
{
    char c;
    while (read(0, &c, 1) == 1 && c != '\n')
        ;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "short") == 0) {
        void *p[7];
        for (int i = 0; i < 7; i++)
            p[i] = pf_escape(malloc(1019));
        for (int i = 0; i < 5; i++)
            free(p[i]);
        /* The lowest free descriptor: the same preloaded as plain when
         * memtop keeps no descriptor open in a short process (libunwind's
         * initialisation opens a pipe: unwind_libunwind.c policy_ready). */
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        printf("short done, first free descriptor %d\n", fd);
        return 3;
    }
    PF_CHECK(argc == 3, "usage: pf_start short | idle PIDFILE | exec PIDFILE | execfail PIDFILE");
    if (strcmp(argv[1], "execfail") == 0) {
        execl("/nonexistent/pf_start", argv[0], (char *)NULL);
        PF_CHECK(errno == ENOENT, "exec of a missing file: %s", strerror(errno));
        argv[1] = "idle";
    }
    if (strcmp(argv[1], "idle") == 0) {
        for (int i = 0; i < 20; i++)
            keep[i] = pf_escape(malloc(1013));
        printf("idle ready\n");
        fflush(stdout);
        write_pid(argv[2]);
        wait_line();
        for (int i = 0; i < 20; i++)
            free(keep[i]);
        return 0;
    }
    PF_CHECK(strcmp(argv[1], "exec") == 0, "unknown mode %s", argv[1]);
    write_pid(argv[2]);
    wait_line();
    PF_CHECK(setenv("MEMTOP_START_MS", "3600000", 1) == 0, "setenv");
    execl("/proc/self/exe", argv[0], "idle", argv[2], (char *)NULL);
    PF_CHECK(0, "exec: %s", strerror(errno));
    return 1;
}
