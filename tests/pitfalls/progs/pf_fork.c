/* pf_fork.c -- pitfall 4: fork, exec, posix_spawn and vfork while other
 * threads allocate.
 *
 * Two worker threads churn the heap the whole time.  The main thread forks
 * repeatedly; children allocate (1019-byte marker blocks), some start a
 * thread of their own, and leave by _exit, exit or return-from-main paths
 * with distinct codes that the parent checks.  It also runs fork+exec of
 * /bin/true and sh -c (whose output it reads), fork+malloc+exec,
 * posix_spawn, and vfork with exec or _exit.  After a vfork child's _exit,
 * the parent's own segment must still be there and not marked exited (a
 * vfork child shares the parent's memory); that is reported at the end so
 * the other checks still run.  argv[1]: a file that receives "pid mode"
 * per forked child (mode: _exit or exit) for the driver's leftover check.
 */
#define _GNU_SOURCE
#include "pf_check.h"
#include "pf_churn.h"
#include "pf_segpeek.h"

#include "shm_layout.h"

#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

enum { FORKS = 30, ROUNDS = 4 };

static void *child_thread(void *arg)
{
    for (int i = 0; i < 100; i++)
        free(pf_escape(malloc(1019)));
    return arg;
}

static int child_work(int i)
{
    void *keep[5];
    for (int k = 0; k < 5; k++)
        keep[k] = malloc(1019);
    if (i % 4 == 0) {
        pthread_t t;
        PF_CHECK(pthread_create(&t, NULL, child_thread, NULL) == 0, "child pthread_create");
        PF_CHECK(pthread_join(t, NULL) == 0, "child join");
    }
    for (int k = 0; k < 5; k++)
        free(keep[k]);
    return 20 + i % 5;
}

static int wait_code(pid_t pid)
{
    int st;
    PF_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    PF_CHECK(WIFEXITED(st), "child %d died with signal %d", (int)pid,
             WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return WEXITSTATUS(st);
}

static void forks(FILE *log)
{
    for (int i = 0; i < FORKS; i++) {
        fflush(log);
        pid_t pid = fork();
        PF_CHECK(pid >= 0, "fork");
        if (pid == 0) {
            int code = child_work(i);
            if (i % 3 == 0)
                _exit(10 + i % 7);
            if (i % 3 == 1)
                exit(code);
            free(pf_escape(malloc(1019)));
            exit(30);
        }
        fprintf(log, "%d %s\n", (int)pid, i % 3 == 0 ? "_exit" : "exit");
        int want = i % 3 == 0 ? 10 + i % 7 : (i % 3 == 1 ? 20 + i % 5 : 30);
        int got = wait_code(pid);
        PF_CHECK(got == want, "fork child %d exited %d, want %d", i, got, want);
    }
}

static int run_exec(const char *cmd, char *out, size_t cap)
{
    int fds[2];
    PF_CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    PF_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(126);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    return wait_code(pid);
}

/* fork, allocate (which starts the child's own publisher), exec at once:
 * the exec replaces the image while its publisher may be creating the
 * child's segment. */
static void alloc_then_exec(void)
{
    pid_t pid = fork();
    PF_CHECK(pid >= 0, "fork");
    if (pid == 0) {
        free(pf_escape(malloc(1019)));
        execl("/bin/true", "true", (char *)NULL);
        _exit(126);
    }
    PF_CHECK(wait_code(pid) == 0, "fork+malloc+exec /bin/true");
}

static int spawn(const char *path, char *const argv[])
{
    pid_t pid;
    int err = posix_spawn(&pid, path, NULL, NULL, argv, environ);
    PF_CHECK(err == 0, "posix_spawn %s: %s", path, strerror(err));
    return wait_code(pid);
}

static const char *g_vfork_damage;

static void check_own_segment(int had_segment)
{
    uint32_t flags = 0;
    if (!had_segment || g_vfork_damage)
        return;
    if (pf_segment_flags(getpid(), &flags) != 0)
        g_vfork_damage = "a vfork child's _exit removed the parent's segment";
    else if (flags & MT_FLAG_EXITED)
        g_vfork_damage = "a vfork child's _exit marked the parent's segment exited";
}

static void vforks(void)
{
    uint32_t flags;
    int had_segment = pf_segment_flags(getpid(), &flags) == 0;
    pid_t pid = vfork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(126);
    }
    PF_CHECK(pid > 0 && wait_code(pid) == 0, "vfork+exec /bin/true");
    pid = vfork();
    if (pid == 0)
        _exit(4);
    PF_CHECK(pid > 0 && wait_code(pid) == 4, "vfork+_exit(4)");
    check_own_segment(had_segment);
}

static void execs(void)
{
    char out[256];
    char *true_argv[] = {"true", NULL};
    char *sh_argv[] = {"sh", "-c", "exit 3", NULL};
    for (int r = 0; r < ROUNDS; r++) {
        PF_CHECK(run_exec("exec /bin/true", out, sizeof out) == 0, "fork+exec /bin/true");
        PF_CHECK(run_exec("echo hi", out, sizeof out) == 0, "fork+exec sh");
        PF_CHECK(strcmp(out, "hi\n") == 0, "sh -c 'echo hi' printed '%s'", out);
        PF_CHECK(run_exec("exit 7", out, sizeof out) == 7, "sh -c 'exit 7'");
        PF_CHECK(spawn("/bin/true", true_argv) == 0, "posix_spawn /bin/true");
        for (int i = 0; i < 4; i++)
            alloc_then_exec();
        PF_CHECK(spawn("/bin/sh", sh_argv) == 3, "posix_spawn sh -c 'exit 3'");
        vforks();
    }
}

int main(int argc, char **argv)
{
    PF_CHECK(argc == 2, "usage: pf_fork PIDLOG");
    FILE *log = fopen(argv[1], "w");
    PF_CHECK(log != NULL, "cannot open %s", argv[1]);
    static atomic_int stop;
    pf_churn_arg args[2] = {{.stop = &stop, .tag = 1, .release = 1},
                            {.stop = &stop, .tag = 2, .release = 1}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        PF_CHECK(pthread_create(&t[i], NULL, pf_churn_thread, &args[i]) == 0, "create");
    forks(log);
    execs();
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        PF_CHECK(pthread_join(t[i], NULL) == 0, "join");
    fclose(log);
    PF_CHECK(g_vfork_damage == NULL, "%s", g_vfork_damage);
    printf("forks=%d exec rounds=%d ok\n", FORKS, ROUNDS);
    return 0;
}
