/* pf_exec_spy.c -- a preload placed after libmemtop.so whose execve stands
 * for an exec the kernel takes its time over.
 *
 * libmemtop.so's execve calls the next definition (dlsym(RTLD_NEXT)):
 * preloaded after it, this one.  A call whose argv[0] is "pf_gate" tells
 * the program it is inside the exec (pf_spy_wait_inside returns), waits
 * until the program lets it go (pf_spy_let_go), then calls the real
 * execve.  Test pitfall_exec_race (progs/pf_exec_race.c): another thread's
 * exec fails meanwhile.  A second gate, argv[0] "pf_gate2"
 * (pf_spy_wait_inside2, pf_spy_let_go2), holds a second exec the same way
 * (recording_writer_exec_race: writer_scenarios execrace). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <string.h>
#include <unistd.h>

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

static sem_t g_inside, g_go, g_inside2, g_go2;

__attribute__((constructor)) static void spy_init(void)
{
    sem_init(&g_inside, 0, 0);
    sem_init(&g_go, 0, 0);
    sem_init(&g_inside2, 0, 0);
    sem_init(&g_go2, 0, 0);
}

static void wait_sem(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR) {
    }
}

void pf_spy_wait_inside(void)
{
    wait_sem(&g_inside);
}

void pf_spy_let_go(void)
{
    sem_post(&g_go);
}

void pf_spy_wait_inside2(void)
{
    wait_sem(&g_inside2);
}

void pf_spy_let_go2(void)
{
    sem_post(&g_go2);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn next = (execve_fn)dlsym(RTLD_NEXT, "execve");
    if (argv[0] && strcmp(argv[0], "pf_gate") == 0) {
        sem_post(&g_inside);
        wait_sem(&g_go);
    } else if (argv[0] && strcmp(argv[0], "pf_gate2") == 0) {
        sem_post(&g_inside2);
        wait_sem(&g_go2);
    }
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, argv, envp);
}
