/* launch.c -- the child process of launch mode (see launch.h). */
#include "launch.h"

#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *val = malloc(n);
    if (!val)
        return -1;
    snprintf(val, n, "%s%s%s", lib, old && *old ? " " : "", old && *old ? old : "");
    int rc = setenv("LD_PRELOAD", val, 1);
    free(val);
    return rc;
}

/* What the child reports through the close-on-exec pipe when it fails
 * before exec succeeds. */
typedef struct spawn_failure {
    enum { STAGE_EXEC, STAGE_OUTPUT } stage;
    int err;
} spawn_failure;

void mt_spawn_out_path(const mt_spawn_io *io, int pid, char *buf, size_t n)
{
    const char *p = strstr(io->out_path, "%p");
    if (!p)
        snprintf(buf, n, "%s", io->out_path);
    else
        snprintf(buf, n, "%.*s%d%s", (int)(p - io->out_path), io->out_path, pid, p + 2);
}

/* stdin from /dev/null, stdout and stderr to the output file: the default
 * name is created exclusively; a name the user gave by out_file.c's rules
 * (never through a symlink, never another user's file).  0 or an errno. */
static int redirect(const mt_spawn_io *io)
{
    char path[4096];
    mt_spawn_out_path(io, (int)getpid(), path, sizeof path);
    int out = io->exclusive ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
                            : mt_out_open_named(path);
    if (out < 0)
        return io->exclusive ? errno : -out;
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        return errno;
    return 0;
}

static void child_exec(char *const argv[], const char *lib, const sigset_t *mask,
                       const mt_spawn_io *io, int report_fd)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    sigprocmask(SIG_SETMASK, mask, NULL);
    spawn_failure f = {STAGE_EXEC, 0};
    if (io && io->own_group)
        setpgid(0, 0);
    int rerr = io && io->out_path ? redirect(io) : 0;
    if (rerr)
        f = (spawn_failure){STAGE_OUTPUT, rerr};
    else if (set_preload(lib) != 0 || setenv("MEMTOP_KEEP_PID", pid, 1) != 0)
        f.err = errno ? errno : ENOMEM;
    else
        execvp(argv[0], argv);
    if (!f.err)
        f.err = errno;
    ssize_t w = write(report_fd, &f, sizeof f);
    (void)w;
    _exit(127);
}

int mt_child_spawn(mt_child *c, char *const argv[], const char *lib, const sigset_t *child_mask,
                   const mt_spawn_io *io, char *err, size_t n)
{
    memset(c, 0, sizeof *c);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, n, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_exec(argv, lib, child_mask, io, fds[1]);
    }
    close(fds[1]);
    spawn_failure f;
    ssize_t r;
    do
        r = read(fds[0], &f, sizeof f);
    while (r < 0 && errno == EINTR);
    close(fds[0]);
    if (r == (ssize_t)sizeof f) {
        waitpid(pid, NULL, 0);
        if (f.stage == STAGE_OUTPUT) {
            char path[4096];
            mt_spawn_out_path(io, (int)pid, path, sizeof path);
            snprintf(err, n, "cannot create %s for %s's output: %s", path, argv[0],
                     mt_out_strerror(f.err));
        } else {
            snprintf(err, n, "cannot run %s: %s", argv[0], strerror(f.err));
        }
        return -2;
    }
    c->pid = pid;
    return 0;
}

bool mt_child_poll(mt_child *c)
{
    if (c->exited)
        return true;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
        return false;
    c->exited = true;
    if (si.si_code == CLD_EXITED)
        c->exit_code = si.si_status;
    else
        c->signo = si.si_status;
    return true;
}

bool mt_child_forwards(const mt_child *c, const siginfo_t *info)
{
    return !c->exited && info->si_code != SI_KERNEL;
}

void mt_child_forward(const mt_child *c, int sig, const siginfo_t *info)
{
    if (mt_child_forwards(c, info))
        kill(c->pid, sig);
}

int mt_child_reap(mt_child *c)
{
    int status = 0;
    pid_t r;
    do
        r = waitpid(c->pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r == c->pid && WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    if (r == c->pid && WIFEXITED(status))
        return WEXITSTATUS(status);
    return c->signo ? 128 + c->signo : c->exit_code;
}
