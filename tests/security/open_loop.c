/* open_loop.c -- opens one pid's segment as the viewer does, many times.
 *
 *   open_loop PID DIR COUNT [no-openat2]
 *
 * Calls mt_segment_open_pid (what `memtop -p PID` and --list do) COUNT
 * times (with no-openat2: in a process where openat2 answers ENOSYS, as on
 * Linux before 5.6, so that the path is walked a name at a time) and prints, per outcome, a line
 * "<count> ok" or "<count> <error message>".  sec_rootlink.py runs it while the target's user swaps
 * a directory on the segment's path for a symlink: a race between reading the target's maps and
 * opening the path it names, too short to hit with whole memtop runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "no_openat2.h"
#include "shm_segment.h"

#define MAX_KINDS 16

typedef struct tally {
    char msg[MAX_KINDS][256];
    long count[MAX_KINDS];
    int kinds;
    long other; /* outcomes past MAX_KINDS */
} tally;

static void add(tally *t, const char *msg)
{
    for (int i = 0; i < t->kinds; i++)
        if (strcmp(t->msg[i], msg) == 0) {
            t->count[i]++;
            return;
        }
    if (t->kinds == MAX_KINDS) {
        t->other++;
        return;
    }
    snprintf(t->msg[t->kinds], sizeof t->msg[0], "%s", msg);
    t->count[t->kinds++] = 1;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "no-openat2") == 0)) {
        fprintf(stderr, "usage: open_loop PID DIR COUNT [no-openat2]\n");
        return 2;
    }
    if (argc == 5 && refuse_openat2(ENOSYS) != 0) {
        perror("open_loop: seccomp");
        return 1;
    }
    int pid = atoi(argv[1]);
    long count = atol(argv[3]);
    static tally t;
    for (long i = 0; i < count; i++) {
        mt_segment seg;
        mt_err err = {MT_OK, ""};
        if (mt_segment_open_pid(&seg, argv[2], pid, &err) == MT_OK) {
            add(&t, "ok");
            mt_segment_close(&seg);
        } else
            add(&t, err.msg);
    }
    for (int i = 0; i < t.kinds; i++)
        printf("%ld %s\n", t.count[i], t.msg[i]);
    if (t.other)
        printf("%ld (other outcomes)\n", t.other);
    return 0;
}
