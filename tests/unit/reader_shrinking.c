/* reader_shrinking.c -- the reader against a segment that shrinks and grows
 * back in a loop while it reads (a hostile owner's ftruncate; before the
 * guard of shm_guard.h this killed memtop with SIGBUS).
 *
 * A child process cuts a valid synthetic segment at places that matter
 * (inside the header, the definitions, the module map, the latest slot's
 * traces), grows it back and rewrites what was cut, over and over.  Two
 * reader threads meanwhile run the whole reader: one keeps the segment
 * open and reads it again and again, the other opens it for every pass
 * (reader_exercise.c).  Passes if the process is still alive after every
 * pass (a SIGBUS kills it), every error is one line with a message, and
 * whatever was accepted is consistent.
 *
 * usage: reader_shrinking [PASSES_PER_THREAD] (default 5000) */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reader_exercise.h"
#include "seg_builder.h"

typedef struct reader {
    const char *path;
    long passes;
    long counts[MT_E_GONE + 1];
    long guard_catches; /* "shrank while being read" */
} reader;

/* err: NULL when reader_exercise.c checked the message already. */
static void tally(reader *r, mt_errc rc, const mt_err *err)
{
    if (rc < MT_OK || rc > MT_E_GONE) {
        fprintf(stderr, "error code %d out of range\n", (int)rc);
        abort();
    }
    if (rc && err && (!err->msg[0] || strchr(err->msg, '\n'))) {
        fprintf(stderr, "error %s without a one-line message: '%s'\n", mt_errc_name(rc), err->msg);
        abort();
    }
    if (rc == MT_E_TRUNCATED && err && strstr(err->msg, "while being read"))
        r->guard_catches++;
    r->counts[rc]++;
    if (rc) { /* let the owner finish what it is doing before the next pass */
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* One pass on an open segment; a fresh definitions/modules copy each time,
 * since the bytes under them may have been zeroed and rewritten. */
static void read_once(reader *r, mt_segment *seg)
{
    mt_err err = {MT_OK, ""};
    mt_snapshot s;
    mt_defs d;
    mt_modules m;
    mt_defs_init(&d);
    mt_modules_init(&m);
    (void)mt_segment_state(seg);
    mt_errc rc = mt_snapshot_read(seg, 0, &s, &err);
    if (rc == MT_OK)
        mt_snapshot_free(&s);
    if (!rc)
        rc = mt_defs_update(&d, seg, &err);
    if (!rc)
        rc = mt_modules_update(&m, seg, &err);
    mt_shm_recording rec;
    if (!rc)
        rc = mt_segment_recording(seg, &rec, &err);
    mt_ctrl_reply reply;
    if (!rc && mt_control_send(seg, MT_CMD_PING, "x", 0, &reply, &err) == MT_E_TRUNCATED)
        rc = MT_E_TRUNCATED;
    tally(r, rc, &err);
    mt_defs_free(&d);
    mt_modules_free(&m);
}

static void *keep_open(void *arg)
{
    reader *r = arg;
    mt_segment seg;
    bool open = false;
    for (long i = 0; i < r->passes; i++) {
        mt_err err = {MT_OK, ""};
        if (!open) {
            mt_errc rc = mt_segment_open_path(&seg, r->path, &err);
            if (rc) {
                tally(r, rc, &err);
                continue;
            }
            open = true;
        }
        read_once(r, &seg);
        if (i % 64 == 63) { /* now and then, map it again */
            mt_segment_close(&seg);
            open = false;
        }
    }
    if (open)
        mt_segment_close(&seg);
    return NULL;
}

static void *open_each_time(void *arg)
{
    reader *r = arg;
    for (long i = 0; i < r->passes; i++)
        tally(r, mt_exercise_reader(-1, r->path), NULL);
    return NULL;
}

/* Bytes of seg up to its last non-zero one: growing a file back zero-fills
 * the rest, so only these need rewriting. */
static uint64_t data_end(const sb_seg *seg)
{
    uint64_t n = seg->size;
    while (n && !seg->buf[n - 1])
        n--;
    return n;
}

/* The hostile owner: cut the file, grow it back, rewrite the lost bytes,
 * leave it whole for a moment; forever.  Mostly cuts where the reader
 * copies (definitions, modules, the latest slot), now and then the header. */
static void shrink_loop(const char *path, const sb_seg *seg)
{
    const mt_shm_header *h = sb_header(seg);
    const mt_shm_slot *latest = sb_slot(seg, h->latest_slot);
    uint64_t slot = h->slots[h->latest_slot].off;
    const uint64_t cuts[] = {
        h->defs_off + h->defs_used / 2,
        slot + latest->ntraces * sizeof(mt_shm_trace) / 2,
        h->modules_off + sizeof(mt_shm_module),
        slot + 4096,
        h->defs_off + h->defs_used - 4096,
        slot + latest->ntraces * sizeof(mt_shm_trace) - 4096,
        MT_HEADER_BYTES / 2,
        0,
    };
    uint64_t end = data_end(seg);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        _exit(1);
    for (unsigned i = 0;; i = (i + 1) % (sizeof cuts / sizeof cuts[0])) {
        uint64_t cut = cuts[i] & ~4095ull;
        if (ftruncate(fd, (off_t)cut) != 0 || ftruncate(fd, (off_t)seg->size) != 0 ||
            pwrite(fd, seg->buf + cut, end - cut, (off_t)cut) != (ssize_t)(end - cut))
            _exit(1);
        for (volatile int spin = 0; spin < 20000; spin++)
            ;
    }
}

static pid_t start_shrinker(const char *path, const sb_seg *seg)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        shrink_loop(path, seg);
    }
    return pid;
}

static void report(const char *name, const reader *r)
{
    printf("%s:", name);
    for (int c = 0; c <= MT_E_GONE; c++)
        if (r->counts[c])
            printf(" %s %ld", mt_errc_name((mt_errc)c), r->counts[c]);
    printf(" (caught by the guard: %ld)\n", r->guard_catches);
}

int main(int argc, char **argv)
{
    long passes = argc > 1 ? atol(argv[1]) : 5000;
    sb_spec spec;
    sb_seg seg;
    sb_default_spec(&spec);
    spec.ntraces = 1500;
    spec.nframes = 16;
    spec.nmodules = 8;
    spec.defs_cap = 512 * 1024;
    spec.slot_cap = 512 * 1024;
    char dir[64]; /* on tmpfs like a real segment, if there is one */
    snprintf(dir, sizeof dir, "%s/memtop-shrinking-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    char path[128];
    if (sb_build(&seg, &spec) != 0 || !mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/memtop-%d", dir, (int)getpid());
    if (sb_write(&seg, path) != 0)
        return 1;
    pid_t shrinker = start_shrinker(path, &seg);
    if (shrinker < 0)
        return 1;
    reader a = {.path = path, .passes = passes}, b = a;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, keep_open, &a);
    pthread_create(&tb, NULL, open_each_time, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    kill(shrinker, SIGKILL);
    int status;
    waitpid(shrinker, &status, 0);
    unlink(path);
    rmdir(dir);
    sb_free(&seg);
    report("kept open", &a);
    report("opened each pass", &b);
    if (WIFEXITED(status)) {
        fprintf(stderr, "the shrinking process stopped early (exit %d)\n", WEXITSTATUS(status));
        return 1;
    }
    printf("%ld reads of a shrinking segment, no signal\n", 2 * passes);
    return 0;
}
