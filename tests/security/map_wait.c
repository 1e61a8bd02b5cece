/* map_wait.c -- maps a file read-only and waits, as a viewer left open on a
 * dead process's segment does.
 *
 *   map_wait FILE
 *
 * Prints "mapped" once the mapping exists, then sleeps until killed.
 * sec_clean_all.py runs it as another user, so that root's `memtop --clean
 * --all-users` finds the file in that user's /proc/PID/maps and keeps it. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct stat st;
    int fd = argc == 2 ? open(argv[1], O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        fprintf(stderr, "usage: map_wait FILE (a non-empty file this user may read)\n");
        return 2;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("map_wait: mmap");
        return 1;
    }
    close(fd); /* the mapping alone keeps the file in /proc/self/maps */
    printf("mapped\n");
    fflush(stdout);
    for (;;)
        pause();
}
