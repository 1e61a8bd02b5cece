/* export_job.c -- exports in a child process (see export_job.h). */
#include "export_job.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "out_file.h"
#include "symbols.h"

/* The directory for default names: the working directory if it is
 * writable, else $TMPDIR (absolute) or /tmp.  It may be shared with other
 * users: names in it are created exclusively (out_file.c). */
static const char *default_dir(char *cwd, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    return access(".", W_OK) == 0 && getcwd(cwd, n) ? cwd
           : tmp && *tmp && tmp[0] == '/'           ? tmp
                                                    : "/tmp";
}

static void default_stem(int pid, char *buf, size_t n)
{
    char stamp[32] = "now";
    time_t t = time(NULL);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, n, "memtop-%d-%s", pid, stamp);
}

void mt_export_default_path(int pid, const char *ext, char *buf, size_t n)
{
    char cwd[4096], stem[64];
    const char *dir = default_dir(cwd, sizeof cwd);
    default_stem(pid, stem, sizeof stem);
    snprintf(buf, n, "%s/%s%s", dir, stem, ext);
    /* Only a likely-free name: the target creates it with O_EXCL|O_NOFOLLOW
     * and refuses a name taken meanwhile. */
    for (int k = 2; access(buf, F_OK) == 0 && k < 1000; k++)
        snprintf(buf, n, "%s/%s-%d%s", dir, stem, k, ext);
}

int mt_export_create_default(int pid, const char *ext, mt_export_dest *d, char *path, size_t n)
{
    char cwd[4096];
    const char *dir = default_dir(cwd, sizeof cwd);
    default_stem(pid, d->stem, sizeof d->stem);
    snprintf(d->ext, sizeof d->ext, "%s", ext);
    int fd = mt_out_temp(dir, d->tmp, sizeof d->tmp);
    const char *tmp = getenv("TMPDIR");
    if (fd == -EACCES || fd == -EROFS) { /* the working directory said writable, but is not */
        dir = tmp && tmp[0] == '/' ? tmp : "/tmp";
        fd = mt_out_temp(dir, d->tmp, sizeof d->tmp);
    }
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    snprintf(path, n, "%s/%s%s", dir, d->stem, ext); /* the name it should take */
    return fd;
}

/* In the child: export, then report "ok" or the error through fd. */
static void child_export(int fd, int out, const mt_view *v, mt_state st, const mt_export_rec *rec,
                         const mt_export_how *how, const char *path)
{
    char msg[1024] = "";
    mt_symbols syms;
    if (mt_symbols_init(&syms, how->symbols, getenv("MEMTOP_SKIP_FUNCS")) != 0) {
        snprintf(msg, sizeof msg, "out of memory");
        close(out);
    } else {
        mt_locator loc = mt_symbols_locator(&syms, &v->mods);
        mt_export_src src = {.v = v,
                             .state = st,
                             .loc = &loc,
                             .sort = how->sort,
                             .rec = rec,
                             .top = 0 /* every row */,
                             .reverse = how->reverse,
                             .threshold = how->threshold};
        if (mt_export_fd(out, path, &src, msg, sizeof msg) != 0 && !msg[0])
            snprintf(msg, sizeof msg, "export failed");
    }
    ssize_t w = write(fd, msg, strlen(msg));
    (void)w;
    _exit(msg[0] ? 1 : 0);
}

int mt_export_start(mt_export_job *j, const mt_view *v, mt_state st, const mt_export_rec *rec,
                    const mt_export_how *how, int out, const mt_export_dest *d, const char *path,
                    char *msg, size_t n)
{
    if (j->pid) {
        snprintf(msg, n, "an export to %s is still being written", j->path);
        close(out);
        unlink(d->tmp);
        return -1;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(msg, n, "pipe: %s", strerror(errno));
        close(out);
        unlink(d->tmp);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, n, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        close(out);
        unlink(d->tmp);
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); /* the viewer blocks them for its signalfd */
        close(fds[0]);
        child_export(fds[1], out, v, st, rec, how, path);
    }
    close(fds[1]);
    close(out);
    j->pid = pid;
    j->dest = *d; /* its temporary file, put in place or removed at the end */
    j->fd = fds[0];
    snprintf(j->path, sizeof j->path, "%s", path);
    return 0;
}

/* A finished export's temporary file put in place (its name in j->path),
 * or removed when it failed; 0, or -1 with a message in msg. */
static int settle(mt_export_job *j, bool ok, char *msg, size_t n)
{
    const mt_export_dest *d = &j->dest;
    if (!ok) {
        unlink(d->tmp);
        return -1;
    }
    char name[sizeof j->path];
    int rc = mt_out_commit_fresh(d->tmp, d->dir, d->stem, d->ext, name, sizeof name);
    if (rc != 0) {
        snprintf(msg, n, "cannot write %s: %s", j->path, strerror(-rc));
        return -1;
    }
    snprintf(j->path, sizeof j->path, "%s", name);
    return 0;
}

static mt_job_state collect(mt_export_job *j, int status, char *msg, size_t n)
{
    char buf[1024];
    ssize_t r = read(j->fd, buf, sizeof buf - 1);
    buf[r > 0 ? r : 0] = 0;
    close(j->fd);
    j->pid = 0;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (buf[0])
        snprintf(msg, n, "%s", buf);
    else
        snprintf(msg, n, "the export of %s died (status %d)", j->path, status);
    if (settle(j, ok, msg, n) != 0)
        return MT_JOB_FAILED;
    snprintf(msg, n, "%s", j->path);
    return MT_JOB_DONE;
}

mt_job_state mt_export_poll(mt_export_job *j, char *msg, size_t n)
{
    if (!j->pid)
        return MT_JOB_IDLE;
    int status;
    pid_t r = waitpid(j->pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return MT_JOB_RUNNING;
    if (r < 0)
        status = -1;
    return collect(j, status, msg, n);
}

void mt_export_finish(mt_export_job *j)
{
    if (!j->pid)
        return;
    fprintf(stderr, "memtop: finishing the export to %s\n", j->path);
    int status = 0;
    while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
        ;
    char msg[256];
    collect(j, status, msg, sizeof msg);
}
