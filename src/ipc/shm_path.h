/* shm_path.h -- where segments live: the directory, the file name of a
 * pid's segment, and the list of segments in a directory. */
#ifndef MEMTOP_SHM_PATH_H
#define MEMTOP_SHM_PATH_H

#include <stddef.h>

#include "shm_error.h"

typedef struct mt_pid_list {
    int *pids; /* ascending */
    size_t count;
} mt_pid_list;

/* $MEMTOP_SHM_DIR if set and not empty, else MT_SHM_DEFAULT_DIR. */
const char *mt_shm_dir(void);

/* "<dir>/memtop-<pid>" into buf; -1 if it does not fit. */
int mt_shm_path(const char *dir, int pid, char *buf, size_t n);

/* The pid in a file name "memtop-<pid>" or "memtop-<pid>-<hex suffix>" (the
 * name a target takes when another user's file is in the way, see
 * docs/shm-protocol.md), or -1 if name is neither. */
int mt_shm_parse_name(const char *name);

/* Calls fn for every entry of dir that parses as a segment name of pid (of
 * any pid if pid is 0), with the directory's descriptor (for fstatat) and the
 * name; stops at the first non-zero return (then MT_E_NOMEM).  The entries
 * are only names: anyone may have created them. */
typedef int (*mt_shm_visit)(int dfd, const char *name, int pid, void *ctx);
mt_errc mt_shm_scan(const char *dir, int pid, mt_shm_visit fn, void *ctx, mt_err *err);

/* The pids of every segment name of dir, ascending, each once.  Free with
 * mt_pid_list_free. */
mt_errc mt_shm_list(const char *dir, mt_pid_list *out, mt_err *err);
void mt_pid_list_free(mt_pid_list *list);

#endif
