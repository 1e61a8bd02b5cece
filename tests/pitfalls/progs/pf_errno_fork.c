/* pf_errno_fork.c -- errno survives a successful malloc, in the parent and
 * at the first allocation of a fork child (where memtop starts the child's
 * publisher and may fail to create its segment).  Exits 1 if errno moved.
 * Pointers are volatile: gcc drops a malloc/free pair whose block does not
 * escape, and then nothing would be allocated at all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    errno = 0;
    void *volatile a = malloc(10);
    if (errno != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        errno = 0;
        void *volatile p = malloc(10);
        int e = errno;
        free(p);
        _exit(e == 0 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    free(a);
    printf("errno kept\n");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
