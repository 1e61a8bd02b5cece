/* writer_fill.c -- target of test_writer_diskfull.py: allocations whose
 * recording compresses poorly (pseudo-random sizes, interleaved frees), to
 * fill a small file system.
 *
 * Usage: writer_fill SECONDS [AFTER]
 * Allocates and frees, keeping up to 4096 blocks live, until its own
 * segment ($MEMTOP_SHM_DIR/memtop-PID) says the recording failed, then
 * AFTER seconds more (default 1.5: a `memtop --record` polling once a
 * second sees the failure while the process runs; longer, a test reads
 * the target after it); at most SECONDS.  Then frees every block and prints
 * "fill done N failed F" (N: allocations, F: 1 if the failure was seen). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "shm_layout.h"

#define LIVE 4096u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* True once the segment's recording state is FAILED. */
static int recording_failed(void)
{
    char path[512];
    const char *dir = getenv("MEMTOP_SHM_DIR");
    snprintf(path, sizeof path, "%s/memtop-%d", dir && *dir ? dir : "/dev/shm", (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    mt_shm_header h;
    ssize_t n = pread(fd, &h, sizeof h, 0);
    close(fd);
    return n == (ssize_t)sizeof h && h.recording.state == MT_REC_STATE_FAILED;
}

int main(int argc, char **argv)
{
    double start = now_s(), end = start + (argc > 1 ? atof(argv[1]) : 1.0), next = start;
    double after = argc > 2 ? atof(argv[2]) : 1.5;
    static void *live[LIVE];
    uint64_t x = 88172645463325252ull, n = 0;
    int failed = 0;
    while (now_s() < end) {
        for (int i = 0; i < 1000; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsigned slot = (unsigned)(x >> 40) % LIVE;
            free(live[slot]);
            live[slot] = malloc(16 + (size_t)(x % 65536));
            n++;
        }
        if (!failed && now_s() >= next) {
            next = now_s() + 0.05;
            if ((failed = recording_failed()) != 0 && now_s() + after < end)
                end = now_s() + after;
        }
    }
    for (unsigned i = 0; i < LIVE; i++)
        free(live[i]);
    printf("fill done %llu failed %d\n", (unsigned long long)n, failed);
    return 0;
}
