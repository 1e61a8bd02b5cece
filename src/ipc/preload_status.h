/* preload_status.h -- why a process that runs libmemtop.so has no segment.
 *
 * When the target cannot create its segment (a full or read-only /dev/shm,
 * no descriptor left: ENOSPC, EACCES, EMFILE...), there is no file to say
 * so in, and it cannot make one.  So the library keeps this small record in
 * its own writable data (the exported symbol `memtop_status`) and a viewer
 * reads it from the process's memory: /proc/<pid>/maps shows where
 * libmemtop.so's data is mapped, /proc/<pid>/mem gives its bytes (the
 * permission a debugger needs, as attaching does).  The reader finds the
 * record by its magic at a multiple of MT_STATUS_ALIGN in a writable
 * mapping of libmemtop.so, and trusts nothing in it (preload_probe.c).
 * Header-only: the preload includes it (publish_status.c).
 * docs/shm-protocol.md, "When there is no segment", has the why. */
#ifndef MEMTOP_PRELOAD_STATUS_H
#define MEMTOP_PRELOAD_STATUS_H

#include <stdint.h>

#define MT_STATUS_MAGIC 0x3153555441544d4dULL /* "MMTATUS1" as little-endian bytes */
#define MT_STATUS_VERSION 1u
#define MT_STATUS_ALIGN 64u
#define MT_STATUS_PATH_MAX 256u

/* What failed, in order of the steps of creating a segment. */
typedef enum mt_status_phase {
    MT_STATUS_NONE = 0,    /* nothing failed (yet): the segment exists or is to come */
    MT_STATUS_CREATE = 1,  /* the file could not be created (open: EACCES, EMFILE, ENOSPC) */
    MT_STATUS_SETUP = 2,   /* it could not be sized, committed or mapped */
    MT_STATUS_PUBLISH = 3, /* it could not be given its name (rename) */
    MT_STATUS_THREAD = 4,  /* the publisher thread could not be started */
    MT_STATUS_PHASES = 5
} mt_status_phase;

typedef struct __attribute__((aligned(MT_STATUS_ALIGN))) mt_status_record {
    uint64_t magic;                /* MT_STATUS_MAGIC, from the start (static data) */
    uint32_t version;              /* MT_STATUS_VERSION */
    uint32_t bytes;                /* sizeof(mt_status_record) */
    uint32_t phase;                /* mt_status_phase; stored last (release) */
    int32_t err;                   /* the errno of the failure */
    int32_t pid;                   /* getpid() of the process that failed (not a parent's copy) */
    uint32_t reserved;             /* 0 */
    char path[MT_STATUS_PATH_MAX]; /* the segment it failed on, NUL-terminated
                                    * (the target's mount namespace) */
} mt_status_record;

#endif
