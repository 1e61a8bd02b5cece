/* writer_scenarios.c -- targets for the recording writer's scenario tests
 * (test_writer_start_in_dliterate.py, _exec_failure.py, _fork_then_exec.py):
 *   dliter SECONDS  a thread allocates inside dl_iterate_phdr callbacks
 *                   (holding the loader lock) while a recording is started;
 *                   prints its pid, then per second the iterations made.
 *   execfail        allocates, calls execv on a missing program, prints the
 *                   errno, then makes 2000 more events and exits.
 *   forkexec [MS]   forks (after a nap of MS milliseconds: memtop's threads
 *                   run meanwhile); the child allocates then execs this
 *                   program ("image"), which makes 1000 events; prints the
 *                   child pid.
 *   execrace        two threads exec at once (test_writer_exec_race.py, with
 *                   the exec spy of tests/pitfalls preloaded after
 *                   libmemtop.so): B's exec of a missing program enters
 *                   first and is held inside the call; main's exec of
 *                   /bin/true enters second and is held; then B's fails,
 *                   and only after that main's goes on and succeeds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static _Atomic unsigned long g_iters;

static int dl_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    char *s = strdup(info->dlpi_name ? info->dlpi_name : "");
    free(s);
    return 0;
}

static void *dl_worker(void *arg)
{
    (void)arg;
    for (;;) {
        dl_iterate_phdr(dl_cb, NULL);
        g_iters++;
    }
    return NULL;
}

static int dliter(int seconds)
{
    pthread_t t;
    pthread_create(&t, NULL, dl_worker, NULL);
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
    write(1, buf, (size_t)n); /* only the worker allocates */
    unsigned long last = 0;
    for (int i = 0; i < seconds; i++) {
        sleep(1);
        unsigned long now = g_iters;
        n = snprintf(buf, sizeof buf, "iters %lu\n", now - last);
        write(1, buf, (size_t)n);
        last = now;
    }
    return 0;
}

static void __attribute__((noinline)) after_exec_events(void)
{
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(5000);
        free(p);
    }
}

static int execfail(char **argv)
{
    void *keep[100];
    for (int i = 0; i < 100; i++)
        keep[i] = malloc(100);
    errno = 0;
    int rc = execv("/nonexistent/memtop-test-prog", argv);
    printf("execv %d errno %d\n", rc, errno);
    fflush(stdout);
    after_exec_events();
    for (int i = 0; i < 100; i++)
        free(keep[i]);
    return 0;
}

static int forkexec(const char *self, int nap_ms)
{
    void *volatile p = malloc(10);
    free(p);
    struct timespec nap = {nap_ms / 1000, (long)(nap_ms % 1000) * 1000000L};
    if (nap_ms > 0)
        nanosleep(&nap, NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *arg = strdup("image"); /* the child allocates before exec */
        execl(self, "writer_scenarios", arg, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

static int image(void)
{
    for (int i = 0; i < 500; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
    return 0;
}

/* The exec spy's gates (pf_exec_spy.c), NULL if it is not preloaded. */
typedef struct {
    void (*wait_inside)(void), (*let_go)(void), (*wait_inside2)(void), (*let_go2)(void);
} spy_gates;
static spy_gates g_spy;

/* B: enters exec first (memtop seals the recording), fails once let go. */
static void *race_b(void *arg)
{
    char *argv[] = {"pf_gate", NULL};
    execve("/nonexistent/memtop-test-prog", argv, (char **)arg);
    g_spy.let_go2(); /* B's exec has failed: main's may go on */
    return NULL;
}

/* C: once main is inside its exec too, lets B's exec fail. */
static void *race_c(void *arg)
{
    (void)arg;
    g_spy.wait_inside2();
    g_spy.let_go();
    return NULL;
}

static int execrace(char **envp)
{
    g_spy = (spy_gates){
        dlsym(RTLD_DEFAULT, "pf_spy_wait_inside"), dlsym(RTLD_DEFAULT, "pf_spy_let_go"),
        dlsym(RTLD_DEFAULT, "pf_spy_wait_inside2"), dlsym(RTLD_DEFAULT, "pf_spy_let_go2")};
    if (!g_spy.wait_inside || !g_spy.let_go || !g_spy.wait_inside2 || !g_spy.let_go2) {
        fprintf(stderr, "execrace: the exec spy is not preloaded\n");
        return 2;
    }
    image(); /* events before the execs */
    pthread_t b, c;
    if (pthread_create(&b, NULL, race_b, envp) != 0 || pthread_create(&c, NULL, race_c, NULL))
        return 3;
    g_spy.wait_inside();
    char *argv[] = {"pf_gate2", NULL};
    char *bare[] = {NULL}; /* no LD_PRELOAD: /bin/true runs without memtop */
    execve("/bin/true", argv, bare);
    perror("execve /bin/true");
    return 4;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "dliter") == 0)
        return dliter(atoi(argv[2]));
    if (argc > 1 && strcmp(argv[1], "execfail") == 0)
        return execfail(argv);
    if (argc > 1 && strcmp(argv[1], "forkexec") == 0)
        return forkexec("/proc/self/exe", argc > 2 ? atoi(argv[2]) : 0);
    if (argc > 1 && strcmp(argv[1], "image") == 0)
        return image();
    if (argc > 1 && strcmp(argv[1], "execrace") == 0)
        return execrace(environ);
    fprintf(stderr, "usage: writer_scenarios dliter S|execfail|forkexec [MS]\n");
    return 2;
}
