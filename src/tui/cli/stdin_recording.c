/* stdin_recording.c -- `memtop -f -`: the copy of standard input made
 * before the recording is opened (see stdin_recording.h).
 *
 * Ctrl-C during the copy reaches the whole pipeline: a `memtop --record -`
 * writing into it stops and finalizes its recording, and the copy takes
 * what still arrives (dat_stdin.c's half second) before it ends; a second
 * Ctrl-C ends it at once (a writer that goes on sending).  The copy, cut
 * anywhere, reads as a recording still being written: up to its last
 * complete frame. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dat_stdin.h"
#include "errors.h"
#include "format.h"
#include "stdin_recording.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    if (interrupted < 2)
        interrupted++; /* the second: no waiting for what still comes */
}

static void progress(uint64_t bytes, void *ctx)
{
    bool *shown = ctx;
    char b[32];
    mt_fmt_bytes(bytes, b, sizeof b);
    fprintf(stderr,
            "\rmemtop: reading a recording from standard input: %s (Ctrl-C: open what "
            "has arrived)\033[K",
            b);
    *shown = true;
}

/* The viewer reads its keys from standard input: the terminal again. */
static int keys_from_tty(void)
{
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
        mt_errorf("-f -: no terminal for the viewer's keys (%s): use --batch or --export",
                  strerror(errno));
        return MT_EXIT_FAIL;
    }
    if (fd != STDIN_FILENO)
        close(fd);
    return MT_EXIT_OK;
}

int mt_stdin_recording(bool viewer)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: the read returns */
    sigemptyset(&sa.sa_mask);
    /* Ignored when we started (a script's background job, nohup): kept
     * so; a Ctrl-C meant for the foreground must not cut the copy short. */
    sigaction(SIGINT, NULL, &old);
    bool ignored = old.sa_handler == SIG_IGN;
    if (!ignored)
        sigaction(SIGINT, &sa, NULL);
    bool shown = false;
    mt_err err = {MT_OK, ""};
    mt_errc rc =
        mt_dat_stdin_spool(&interrupted, isatty(STDERR_FILENO) ? progress : NULL, &shown, &err);
    if (!ignored)
        sigaction(SIGINT, &old, NULL);
    if (shown)
        fputc('\n', stderr);
    if (rc != MT_OK) {
        mt_errorf("%s: %s", MT_DAT_STDIN_NAME, err.msg);
        return MT_EXIT_FAIL;
    }
    return viewer ? keys_from_tty() : MT_EXIT_OK;
}
