/* out_file.h -- opening the files memtop writes its output to, safely in
 * directories other users can write to (see out_file.c). */
#ifndef MEMTOP_OUT_FILE_H
#define MEMTOP_OUT_FILE_H

#include <stddef.h>

/* Creates a temporary file in dir, .memtop-XXXXXX.tmp (random;
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), for an output written whole or
 * not at all.  Returns the descriptor with the name in buf, or -errno. */
int mt_out_temp(const char *dir, char *buf, size_t n);

/* Gives the temporary file tmp the name dir/stem<ext>, or if that name is
 * taken (a file, a directory, a symlink, dangling or not) dir/stem-2<ext>,
 * -3, ... up to -999, never replacing anything.  0 with the name in buf,
 * or -errno (-EEXIST: every name taken); tmp is removed on failure. */
int mt_out_commit_fresh(const char *tmp, const char *dir, const char *stem, const char *ext,
                        char *buf, size_t n);

/* Opens a file the user named for writing, emptied: created 0600 if it
 * does not exist; an existing one only if it is a regular file with a
 * single link, owned by memtop's effective user, or a character device
 * (/dev/null, a terminal: written, not emptied).  A symlink is never
 * followed, nor a FIFO waited on.  Returns the descriptor, or -errno;
 * the refusals are -ELOOP (a symlink), -EINVAL or -ENXIO (not a regular
 * file), -EMLINK (other hard links), -EPERM (another user's file). */
int mt_out_open_named(const char *path);

/* The reason for a -errno of mt_out_open_named, in words: its refusals
 * say what was found, other errors are strerror's. */
const char *mt_out_strerror(int err);

/* The same rules for an output written whole or not at all: path is
 * checked as mt_out_open_named checks it (without creating or emptying
 * it), then a temporary file is made beside it (mt_out_temp, its name in
 * tmp) and its descriptor returned; mt_out_commit_whole puts it in place.
 * A character device is opened and returned as it is (tmp "").  When the
 * directory refuses the temporary file (EACCES, EPERM) but path is an
 * existing file that passed the checks, that file is returned emptied, to
 * be written in place, not atomically (tmp ""); a new name gets the
 * refusal.  -errno as mt_out_open_named's. */
int mt_out_open_whole(const char *path, char *tmp, size_t n);

/* Renames tmp to path once written, after checking path again by the same
 * rules (it may have changed since mt_out_open_whole); 0, or -errno with
 * tmp removed. */
int mt_out_commit_whole(const char *tmp, const char *path);

#endif
