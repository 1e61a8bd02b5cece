/* shm_error.h -- error values of the segment reader.
 *
 * The reader library never prints or exits: every fallible function returns
 * an mt_errc and, when given an mt_err, leaves a one-line message in it that
 * a caller can show as is. */
#ifndef MEMTOP_SHM_ERROR_H
#define MEMTOP_SHM_ERROR_H

typedef enum mt_errc {
    MT_OK = 0,
    MT_E_NOENT,     /* no segment file */
    MT_E_PERM,      /* owned by another user and we are not root */
    MT_E_IO,        /* open/stat/mmap/read failed */
    MT_E_NOTREADY,  /* the file exists but its header is not written yet */
    MT_E_NOTMEMTOP, /* not a memtop segment (bad magic, not a regular file) */
    MT_E_FOREIGN,   /* another layout version, byte order or word size */
    MT_E_TRUNCATED, /* the file is smaller than its header says */
    MT_E_CORRUPT,   /* an offset, size or count is out of bounds */
    MT_E_EMPTY,     /* no snapshot has been published yet */
    MT_E_BUSY,      /* no consistent snapshot within the retry budget */
    MT_E_NOMEM,     /* out of memory in the viewer */
    MT_E_READONLY,  /* the control channel needs a writable mapping */
    MT_E_TIMEOUT,   /* the target did not answer in time */
    MT_E_TARGET,    /* the target answered with an error status */
    MT_E_GONE,      /* the target process ended */
    MT_E_UNTRUSTED, /* the file's owner is not the process's user (shm_owner.h) */
    MT_E_FULL,      /* no snapshot: the target cannot grow its file (full /dev/shm) */
} mt_errc;

typedef struct mt_err {
    mt_errc code;
    char msg[256];
} mt_err;

/* Fill err (may be NULL) and return code. */
mt_errc mt_err_set(mt_err *err, mt_errc code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short stable name of a code, e.g. "corrupt". */
const char *mt_errc_name(mt_errc code);

#endif
