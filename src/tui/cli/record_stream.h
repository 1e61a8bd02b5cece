/* record_stream.h -- `memtop -p PID --record -`: the target records into a
 * file in a private directory memtop made; memtop relays the file's
 * complete zstd frames to its standard output as they are written, punches
 * out what it has relayed (the disk holds only what is not sent yet), and
 * stops the recording when standard output falls too far behind (the
 * target never waits for memtop or for the reader of its output).
 * docs/recording-format.md, "Streaming". */
#ifndef MEMTOP_RECORD_STREAM_H
#define MEMTOP_RECORD_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm_layout.h"

#define MT_STREAM_BACKLOG_DEFAULT (64ull << 20) /* bytes not yet sent: then stop */

typedef struct mt_stream {
    char dir[MT_PATH_MAX - 16], path[MT_PATH_MAX]; /* the private directory, the file in it */
    int fd;                                        /* the recording, read-only; -1 until opened */
    int out;                                       /* where it goes (standard output) */
    uint64_t sent;                                 /* file bytes relayed (whole frames) */
    uint64_t punched;                              /* file bytes given back to the disk */
    uint64_t backlog_max;                          /* MEMTOP_STREAM_BACKLOG or the default */
    unsigned char *buf;                            /* bytes read past `sent`, up to `len` */
    size_t len, cap;
    size_t ready;      /* buf[0, ready): the header and whole frames, to send */
    bool header_seen;  /* the file header is in ready or sent */
    bool out_closed;   /* the reader went away (EPIPE) */
    uint64_t cut_back; /* bytes the target cut off after they were sent */
} mt_stream;

/* Makes the private directory (0700; given to uid when memtop is root and
 * the target is not) and the path the target is to create.  0, or -1 with
 * a message in msg. */
int mt_stream_prepare(mt_stream *s, uid_t target_uid, char *msg, size_t n);
/* Opens the file the target created (no symlink, a regular file owned by
 * uid or by us), then removes it and the directory: the two descriptors
 * keep it.  0, or -1 with a message. */
int mt_stream_open(mt_stream *s, uid_t target_uid, char *msg, size_t n);
/* Relays what is complete.  final: the target finished the file (relay
 * all).  Returns 0; 1 when the backlog is above its bound (the caller
 * stops the recording); -1 on an error (message in msg). */
int mt_stream_pump(mt_stream *s, bool final, char *msg, size_t n);
/* Bytes written by the target and not relayed yet. */
uint64_t mt_stream_backlog(const mt_stream *s);
void mt_stream_close(mt_stream *s);

#endif
