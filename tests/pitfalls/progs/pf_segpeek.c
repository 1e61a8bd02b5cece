/* pf_segpeek.c -- read the flags word and publish count of a process's memtop
 * segment. */
#include "pf_segpeek.h"

#include "shm_layout.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int pf_segment_flags(pid_t pid, uint32_t *flags)
{
    uint64_t publishes;
    return pf_segment_state(pid, flags, &publishes);
}

int pf_segment_state(pid_t pid, uint32_t *flags, uint64_t *publishes)
{
    const char *dir = getenv("MEMTOP_SHM_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%d", dir && *dir ? dir : MT_SHM_DEFAULT_DIR, MT_SHM_PREFIX,
             (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    void *p = mmap(NULL, MT_HEADER_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    const mt_shm_header *h = p;
    *flags = __atomic_load_n(&h->flags, __ATOMIC_ACQUIRE);
    *publishes = __atomic_load_n(&h->publish_count, __ATOMIC_ACQUIRE);
    munmap(p, MT_HEADER_BYTES);
    return 0;
}
