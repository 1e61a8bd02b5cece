/* pf_fork_live.c -- pitfall 4b: a forked child that keeps running.
 *
 * The parent allocates, forks, and waits.  The child allocates (1021-byte
 * marker blocks, 10 of them kept live), writes "PARENTPID CHILDPID" to the
 * file argv[1], then blocks reading stdin until EOF, frees and exits 0.
 * Meanwhile the driver checks that the child has its own segment.
 */
#include "pf_check.h"

#include <sys/wait.h>

static void child(const char *pidfile)
{
    void *keep[10];
    for (int i = 0; i < 10; i++)
        keep[i] = malloc(1021);
    FILE *f = fopen(pidfile, "w");
    PF_CHECK(f != NULL, "cannot write %s", pidfile);
    fprintf(f, "%d %d\n", (int)getppid(), (int)getpid());
    fclose(f);
    char buf[64];
    while (read(0, buf, sizeof buf) > 0)
        free(pf_escape(malloc(1021)));
    for (int i = 0; i < 10; i++)
        free(keep[i]);
    exit(0);
}

int main(int argc, char **argv)
{
    PF_CHECK(argc == 2, "usage: pf_fork_live PIDFILE");
    void *before = malloc(1031);
    fflush(stdout);
    pid_t pid = fork();
    PF_CHECK(pid >= 0, "fork");
    if (pid == 0)
        child(argv[1]);
    int st;
    PF_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    free(before);
    PF_CHECK(WIFEXITED(st), "child died with signal %d", WTERMSIG(st));
    printf("child exited %d\n", WEXITSTATUS(st));
    return 0;
}
