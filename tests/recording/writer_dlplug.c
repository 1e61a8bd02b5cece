/* writer_dlplug.c -- target of test_writer_dlclose.py: a plugin loaded,
 * allocated from and unloaded at once, N times, as a service that runs a
 * plugin now and then; then, optionally, a second plugin loaded beside the
 * first.  Each life of the plugin is far shorter than the recording
 * writer's pass, so only a module map written at the dlclose names the
 * library in the recording.
 *
 * Usage: writer_dlplug WAIT_MS N GAP_US PLUGIN.so [PLUGIN_B.so]
 * Waits WAIT_MS first (the writer's first pass, at the start, is then
 * over: with MEMTOP_TEST_WRITER_STALL_MS the next is far off).  Each of
 * the N rounds: dlopen PLUGIN (its constructor keeps a block),
 * plug_alloc(777) kept, dlclose, a nap of GAP_US.  Then, with PLUGIN_B:
 * dlopen PLUGIN and PLUGIN_B (which cannot be loaded where PLUGIN is),
 * PLUGIN_B's plug_alloc(777) kept, dlclose both.  Prints the longest
 * dlclose ("longest dlclose: N us": a dlclose must never wait for the
 * recording's disk).  Exits 0, or 1 if a plugin fails.
 *
 * WRITER_DLPLUG_SECCOMP=1: first a seccomp filter that kills the process on
 * process_vm_readv (as a hardened service's may: systemd's SystemCallFilter
 * without it), so that libmemtop.so is seen never to call it here. */
#include <dlfcn.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void nap_us(long us)
{
    struct timespec ts = {us / 1000000, us % 1000000 * 1000L};
    nanosleep(&ts, NULL);
}

static long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* dlclose, timed: the longest so far in *longest (us). */
static void timed_dlclose(void *h, long *longest)
{
    long t0 = now_us();
    dlclose(h);
    long t = now_us() - t0;
    if (t > *longest)
        *longest = t;
}

/* Kills the process on process_vm_readv, allows every other call (x86-64). */
static int forbid_vm_readv(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof *f, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return perror("writer_dlplug: seccomp"), -1;
    return 0;
}

static void *(*plug_alloc_of(void *h))(size_t)
{
    return h ? (void *(*)(size_t))dlsym(h, "plug_alloc") : NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6)
        return fprintf(stderr, "usage: writer_dlplug WAIT_MS N GAP_US PLUGIN.so [PLUGIN_B.so]\n"),
               2;
    int n = atoi(argv[2]);
    long gap_us = atol(argv[3]), longest = 0;
    const char *sc = getenv("WRITER_DLPLUG_SECCOMP");
    if (sc && *sc == '1' && forbid_vm_readv() != 0)
        return 1;
    nap_us(atol(argv[1]) * 1000);
    void *volatile *kept = calloc((size_t)n + 1, sizeof *kept);
    for (int i = 0; i < n; i++) {
        void *h = dlopen(argv[4], RTLD_NOW);
        void *(*plug_alloc)(size_t) = plug_alloc_of(h);
        if (!plug_alloc)
            return fprintf(stderr, "writer_dlplug: %s\n", dlerror()), 1;
        kept[i] = plug_alloc(777);
        timed_dlclose(h, &longest);
        if (gap_us)
            nap_us(gap_us);
    }
    if (argc == 6) {
        void *h = dlopen(argv[4], RTLD_NOW), *hb = dlopen(argv[5], RTLD_NOW);
        void *(*plug_alloc)(size_t) = plug_alloc_of(hb);
        if (!h || !plug_alloc)
            return fprintf(stderr, "writer_dlplug: %s\n", dlerror()), 1;
        kept[n] = plug_alloc(777);
        timed_dlclose(hb, &longest);
        timed_dlclose(h, &longest);
    }
    printf("longest dlclose: %ld us\n", longest);
    return 0;
}
