/* test_code_patch.c -- unit tests of redirecting entry points in memory
 * (src/preload/alloc/alloc_patch.c), compiled on its own.
 *
 * The functions patched are written here in assembly, so that their bytes
 * are known: each one exercises a hazard of the displaced instructions (a
 * RIP-relative operand, a short jcc, a rel32 call, endbr64 at the entry)
 * or a reason to refuse (a branch back into the displaced bytes, a loop
 * instruction, a function shorter than the jump).  A redirected function
 * must reach the hook when called at its entry, and its trampoline must
 * compute what the original did; a refused one must be left as it was,
 * with the reason said.  The process is single-threaded until the last
 * three tests, which patch with other threads running: mt_patch_all stops
 * them (alloc_stop.c) and refuses when one blocks the signal or waits
 * inside the bytes to rewrite; the functions lie on pages of their own,
 * since a page being patched is not executable for a moment.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc_patch.h"
#include "alloc_stop.h"
#include "core_state.h"

/* core_loader_gate.c reads its test knob in mt_g (zero). */
mt_global mt_g;

/* hook_nested.c's list of code whose calls into an allocator's entry are
 * the allocator's own: the ranges alloc_patch.c gives it, kept here. */
static struct {
    uint64_t lo, hi;
} g_code[8];
static size_t g_ncode;

void mt_nested_code_add(uint64_t lo, uint64_t hi)
{
    if (g_ncode < sizeof g_code / sizeof *g_code)
        g_code[g_ncode++] = (typeof(g_code[0])){lo, hi};
}

static bool code_known(const void *pc)
{
    for (size_t i = 0; i < g_ncode; i++)
        if ((uint64_t)(uintptr_t)pc >= g_code[i].lo && (uint64_t)(uintptr_t)pc < g_code[i].hi)
            return true;
    return false;
}

#define FN(name, body)                                                                             \
    ".globl " #name "\n.type " #name ",@function\n" #name ":\n" body ".globl " #name               \
    "_end\n" #name "_end:\n"

/* On pages of their own: a page being patched is not executable meanwhile,
 * so it must not hold the code doing the patching. */
__asm__(".text\n.p2align 12\n"
        /* mov value(%rip), %eax; add %edi, %eax; ret */
        FN(f_rip, "mov f_value(%rip), %eax\nadd %edi, %eax\nret\n")
        /* test; je (short, out of the displaced bytes); mov $1; ret; 1: mov $2; ret */
        FN(f_jcc, "test %edi, %edi\nje 1f\nmov $1, %eax\nret\n1: mov $2, %eax\nret\n")
        /* call (rel32) a helper first */
        FN(f_call, "call f_helper\nadd %edi, %eax\nret\n")
        /* endbr64 at the entry: the patch follows it */
        FN(f_endbr, "endbr64\nmov $7, %eax\nadd %edi, %eax\nret\n")
        /* a branch from later in the body back to byte 1 of the patch: refused */
        FN(f_back, "nop\n1: mov $3, %eax\ndec %edi\njnz 1b\nret\n")
        /* a loop instruction in the displaced bytes: refused */
        FN(f_loop, "mov %edi, %ecx\n1: loop 1b\nmov $4, %eax\nret\n")
        /* shorter than the jump: refused */
        FN(f_short, "xor %eax, %eax\nret\n")
        /* one function under two names */
        FN(f_alias, "mov $6, %eax\nadd %edi, %eax\nret\n")
        /* patched while other threads run: the world is stopped */
        FN(f_thr, "mov $5, %eax\nadd %edi, %eax\nret\n")
        /* read(fd, buf, n) made inside the displaced bytes */
        FN(f_sys, "xor %eax, %eax\nsyscall\nret\n") "f_helper: mov $100, %eax\nret\n"
                                                    ".p2align 12\n"
                                                    ".data\nf_value: .long 40\n.text\n");

#define DECL(name) extern char name[], name##_end[];
DECL(f_rip)
DECL(f_jcc)
DECL(f_call)
DECL(f_endbr)
DECL(f_back)
DECL(f_loop)
DECL(f_short)
DECL(f_thr)
DECL(f_sys)
DECL(f_alias)

typedef int (*fn_t)(int);
static _Atomic(void *) orig[7]; /* the trampolines (alloc_patch.h) */
static int hook_calls;

static int hook_add1000(int x)
{
    hook_calls++;
    return 1000 + x;
}

static mt_patch patch_of(char *lo, char *hi, _Atomic(void *) *o)
{
    mt_patch p;
    memset(&p, 0, sizeof p);
    p.addr = (uint64_t)(uintptr_t)lo;
    p.size = (uint64_t)(hi - lo);
    p.hook = (void *)hook_add1000;
    p.orig = o;
    return p;
}

static mt_patch g_p[7];

/* Patches all seven once (mt_patch_all wants them in one module). */
static int setup(void **state)
{
    (void)state;
    g_p[0] = patch_of(f_rip, f_rip_end, &orig[0]);
    g_p[1] = patch_of(f_jcc, f_jcc_end, &orig[1]);
    g_p[2] = patch_of(f_call, f_call_end, &orig[2]);
    g_p[3] = patch_of(f_endbr, f_endbr_end, &orig[3]);
    g_p[4] = patch_of(f_back, f_back_end, &orig[4]);
    g_p[5] = patch_of(f_loop, f_loop_end, &orig[5]);
    g_p[6] = patch_of(f_short, f_short_end, &orig[6]);
    return mt_patch_all(g_p, 7, false) ? 0 : -1;
}

static int call(void *f, int x)
{
    fn_t fn;
    memcpy(&fn, &f, sizeof fn);
    return fn(x);
}

static void test_rip_relative(void **state)
{
    (void)state;
    assert_true(g_p[0].done);
    assert_int_equal(call(f_rip, 2), 1002); /* the entry reaches the hook */
    assert_int_equal(call(atomic_load_explicit(&orig[0], memory_order_acquire), 2),
                     42); /* the trampoline reads f_value */
}

static void test_short_jcc(void **state)
{
    (void)state;
    assert_true(g_p[1].done);
    assert_int_equal(call(f_jcc, 5), 1005);
    assert_int_equal(call(atomic_load_explicit(&orig[1], memory_order_acquire), 0),
                     2); /* taken: the widened jcc */
    assert_int_equal(call(atomic_load_explicit(&orig[1], memory_order_acquire), 9), 1);
}

static void test_call_rel32(void **state)
{
    (void)state;
    assert_true(g_p[2].done);
    assert_int_equal(call(f_call, 1), 1001);
    assert_int_equal(call(atomic_load_explicit(&orig[2], memory_order_acquire), 1), 101);
    /* the displaced call returns into the trampoline: a call it makes into
     * an allocator's entry from inside memtop's real call is the
     * allocator's own only if memtop knows that code (hook_nested.h;
     * mi_reallocarray's trampoline calls mi_reallocn) */
    assert_true(code_known(atomic_load_explicit(&orig[2], memory_order_acquire)));
}

static void test_endbr_kept(void **state)
{
    (void)state;
    static const unsigned char endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
    assert_true(g_p[3].done);
    assert_memory_equal(f_endbr, endbr, 4); /* the entry keeps it */
    assert_int_equal((unsigned char)f_endbr[4], 0xe9);
    assert_memory_equal(atomic_load_explicit(&orig[3], memory_order_acquire), endbr,
                        4); /* the trampoline starts with one */
    assert_int_equal(call(f_endbr, 3), 1003);
    assert_int_equal(call(atomic_load_explicit(&orig[3], memory_order_acquire), 3), 10);
}

static void test_refused(void **state)
{
    (void)state;
    assert_false(g_p[4].done);
    assert_non_null(strstr(g_p[4].why, "jumps into the bytes the patch replaces"));
    assert_false(g_p[5].done);
    assert_non_null(strstr(g_p[5].why, "cannot be moved"));
    assert_false(g_p[6].done);
    assert_non_null(strstr(g_p[6].why, "shorter than"));
    /* left as they were */
    assert_int_equal(call(f_back, 4), 3);
    assert_int_equal(call(f_loop, 4), 4);
    assert_int_equal(call(f_short, 4), 0);
    assert_null(atomic_load_explicit(&orig[4], memory_order_acquire));
    assert_null(atomic_load_explicit(&orig[5], memory_order_acquire));
    assert_null(atomic_load_explicit(&orig[6], memory_order_acquire));
}

static void test_wx(void **state)
{
    (void)state;
    /* The trampoline page and the patched code are not writable: writing
     * to them would fault; mprotect to their own protection succeeds and
     * a page that is not mapped would say ENOMEM, so look at /proc. */
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    int wx = 0;
    while (fgets(line, sizeof line, f))
        wx += strstr(line, " rwx") != NULL || strstr(line, " -wx") != NULL;
    fclose(f);
    assert_int_equal(wx, 0);
    assert_true(hook_calls >= 4);
}

static int hook_add2000(int x)
{
    return 2000 + x;
}

static void test_alias(void **state)
{
    (void)state;
    _Atomic(void *) o[2] = {NULL, NULL};
    mt_patch p[2] = {patch_of(f_alias, f_alias_end, &o[0]), patch_of(f_alias, f_alias_end, &o[1])};
    p[1].hook = (void *)hook_add2000;
    assert_true(mt_patch_all(p, 2, false));
    assert_true(p[0].done && p[1].done);
    void *o0 = atomic_load_explicit(&o[0], memory_order_acquire);
    void *o1 = atomic_load_explicit(&o[1], memory_order_acquire);
    assert_ptr_equal(o0, o1);
    assert_int_equal(call(f_alias, 1), 1001); /* the first one's hook */
    assert_int_equal(call(o1, 1), 7);
}

/* All or nothing (jemalloc's set, alloc_je_redirect.c): one function
 * refused leaves the others as they were, each saying why. */
static void test_whole(void **state)
{
    (void)state;
    _Atomic(void *) o[2] = {NULL, NULL};
    mt_patch p[2] = {patch_of(f_thr, f_thr_end, &o[0]), patch_of(f_back, f_back_end, &o[1])};
    assert_false(mt_patch_all(p, 2, true));
    assert_false(p[0].done || p[1].done);
    assert_non_null(strstr(p[0].why, "another entry"));
    assert_non_null(strstr(p[1].why, "jumps into the bytes the patch replaces"));
    assert_null(atomic_load_explicit(&o[0], memory_order_acquire));
    assert_int_equal(call(f_thr, 1), 6); /* untouched */
}

static void *wait_pipe(void *arg)
{
    char c;
    return (void *)(intptr_t)read(*(int *)arg, &c, 1);
}

static _Atomic int g_tid; /* of the thread a test waits for */

/* wait_pipe, its tid in g_tid first (for wait_asleep). */
static void *wait_pipe_tid(void *arg)
{
    atomic_store_explicit(&g_tid, (int)syscall(SYS_gettid), memory_order_release);
    return wait_pipe(arg);
}

static void *wait_pipe_blocked(void *arg)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    atomic_store_explicit(&g_tid, (int)syscall(SYS_gettid), memory_order_release);
    return wait_pipe(arg);
}

/* Waits until the thread in g_tid sleeps in the kernel (state S in its
 * /proc stat): past its setup, in its blocking call. */
static void wait_asleep(void)
{
    for (;;) {
        int tid = atomic_load_explicit(&g_tid, memory_order_acquire);
        char path[64], buf[256] = "";
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
        FILE *f = tid ? fopen(path, "r") : NULL;
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose(f);
            const char *r = strrchr(buf, ')');
            if (r && r[1] == ' ' && r[2] == 'S')
                return;
        }
        usleep(1000);
    }
}

/* The signals pending on thread tid alone (SigPnd in its /proc status). */
static unsigned long long thread_pending(int tid)
{
    char path[64], buf[4096] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    const char *p = strstr(buf, "\nSigPnd:");
    assert_non_null(p);
    return strtoull(p + 9, NULL, 16);
}

/* A thread that blocks every signal cannot be stopped: refused after the
 * timeout, the function left as it was, and no stop signal left pending
 * on the thread (a program taking its signals with sigwait or a signalfd
 * would receive it). */
static void test_thread_blocks_signals(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pthread_t th;
    atomic_store_explicit(&g_tid, 0, memory_order_relaxed);
    assert_int_equal(pthread_create(&th, NULL, wait_pipe_blocked, &fds[0]), 0);
    wait_asleep(); /* signals blocked, in read() */
    _Atomic(void *) o = NULL;
    mt_patch p = patch_of(f_thr, f_thr_end, &o);
    assert_false(mt_patch_all(&p, 1, false));
    assert_false(p.done);
    assert_non_null(strstr(p.why, "did not stop"));
    assert_null(atomic_load_explicit(&o, memory_order_acquire));
    assert_int_equal(call(f_thr, 1), 6); /* untouched */
    assert_int_equal(thread_pending(atomic_load_explicit(&g_tid, memory_order_acquire)), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    pthread_join(th, NULL);
    close(fds[0]);
    close(fds[1]);
}

typedef long (*read_fn)(int, void *, size_t);

/* Reads a byte through f_sys: the thread waits with its program counter
 * inside f_sys's displaced bytes (the kernel restarts the read there after
 * a signal handler, SA_RESTART). */
static void *read_in_f_sys(void *arg)
{
    atomic_store_explicit(&g_tid, (int)syscall(SYS_gettid), memory_order_release);
    read_fn fn;
    void *f = f_sys;
    memcpy(&fn, &f, sizeof fn);
    char c;
    return (void *)(intptr_t)fn(*(int *)arg, &c, 1);
}

/* A thread inside the bytes to rewrite: refused (after a few stops). */
static void test_thread_inside(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pthread_t th;
    atomic_store_explicit(&g_tid, 0, memory_order_relaxed);
    assert_int_equal(pthread_create(&th, NULL, read_in_f_sys, &fds[0]), 0);
    wait_asleep(); /* in read(), inside f_sys */
    _Atomic(void *) o = NULL;
    mt_patch p = patch_of(f_sys, f_sys_end, &o);
    assert_false(mt_patch_all(&p, 1, false));
    assert_false(p.done);
    assert_non_null(strstr(p.why, "inside the bytes"));
    assert_null(atomic_load_explicit(&o, memory_order_acquire));
    assert_int_equal(write(fds[1], "x", 1), 1);
    void *got = NULL;
    pthread_join(th, &got);
    assert_int_equal((intptr_t)got, 1); /* the restarted read got the byte */
    close(fds[0]);
    close(fds[1]);
}

/* Other threads running elsewhere (one blocked in read, restarted after
 * the stop): the world is stopped, the function redirected, the thread
 * unharmed. */
static void test_stop_world(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_pipe, &fds[0]), 0);
    _Atomic(void *) o = NULL;
    mt_patch p = patch_of(f_thr, f_thr_end, &o);
    assert_true(mt_patch_all(&p, 1, false));
    assert_true(p.done);
    assert_int_equal(call(f_thr, 1), 1001);
    assert_int_equal(call(atomic_load_explicit(&o, memory_order_acquire), 1), 6);
    assert_int_equal(write(fds[1], "x", 1), 1);
    void *got = NULL;
    pthread_join(th, &got);
    assert_int_equal((intptr_t)got, 1); /* its read() was restarted and got the byte */
    close(fds[0]);
    close(fds[1]);
}

/* Waits for child, which must have exited with 0. */
static void expect_exit_0(pid_t child)
{
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The child of a fork made in the middle of a stop (its memory copied
 * with the stop held, as when a thread is in clone as the stop begins) can
 * stop its own threads later: the parent's parked threads are not its. */
static void test_fork_during_stop(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_pipe, &fds[0]), 0);
    char why[128] = "";
    assert_true(mt_world_stop(NULL, 0, why, sizeof why)); /* th parked */
    pid_t child = fork();
    assert_int_not_equal(child, -1);
    if (child == 0) {
        pthread_t cth;
        int ok = pthread_create(&cth, NULL, wait_pipe, &fds[0]) == 0 &&
                 mt_world_stop(NULL, 0, why, sizeof why);
        if (ok)
            mt_world_resume();
        else
            fprintf(stderr, "child: %s\n", why);
        _exit(ok ? 0 : 1);
    }
    mt_world_resume();
    expect_exit_0(child);
    assert_int_equal(write(fds[1], "x", 1), 1);
    pthread_join(th, NULL);
    close(fds[0]);
    close(fds[1]);
}

/* Waits in read() with a word inside f_thr's first bytes on its stack,
 * which the stop's stack check must see. */
static void *read_marked(void *arg)
{
    volatile uint64_t mark = (uint64_t)(uintptr_t)f_thr + 2;
    void *got = wait_pipe_tid(arg);
    return (void *)(uintptr_t)(mark ? (uintptr_t)got : 0);
}

/* The stop's stack check in a child under a seccomp filter (it stays with
 * the child) that answers `nr` with `action`, a thread waiting with a word
 * inside f_thr's first bytes on its stack: the child exits 0 when the stop
 * was refused and its reason holds `want`. */
static void stop_under_filter(int nr, uint32_t action, const char *want)
{
    pid_t child = fork();
    assert_int_not_equal(child, -1);
    if (child == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, action),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {sizeof f / sizeof f[0], f};
        int fds[2];
        pthread_t th;
        char why[128] = "";
        atomic_store_explicit(&g_tid, 0, memory_order_relaxed);
        if (pipe(fds) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 ||
            pthread_create(&th, NULL, read_marked, &fds[0]) != 0)
            _exit(2);
        wait_asleep();
        mt_stop_range r = {(uint64_t)(uintptr_t)f_thr, (uint64_t)(uintptr_t)f_thr + 5};
        bool stopped = mt_world_stop(&r, 1, why, sizeof why);
        if (stopped)
            mt_world_resume();
        fprintf(stderr, "child: stopped %d (%s)\n", stopped, why);
        _exit(!stopped && strstr(why, want) ? 0 : 1);
    }
    expect_exit_0(child);
}

/* A hardened service's filter may kill the process on process_vm_readv
 * (systemd's SystemCallFilter without it): the stack is read without it,
 * and the marked thread is seen. */
static void test_stack_read_under_vm_readv_kill(void **state)
{
    (void)state;
    stop_under_filter(SYS_process_vm_readv, SECCOMP_RET_KILL_PROCESS, "a thread is inside");
}

/* The stack cannot be read (pread refused: as /proc/thread-self/mem
 * missing would): the check cannot be made, so the stop is refused
 * instead of taken as clear. */
static void test_stack_unreadable(void **state)
{
    (void)state;
    stop_under_filter(SYS_pread64, SECCOMP_RET_ERRNO | EPERM, "cannot read");
}

/* The stopper of test_leader_gone: waits until the main thread has
 * exited (a zombie in /proc), then stops the world. */
static void *stop_after_leader(void *arg)
{
    (void)arg;
    char path[64], buf[256] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    for (;;) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *r = strrchr(buf, ')');
        if (r && r[1] == ' ' && r[2] == 'Z')
            break;
        usleep(1000);
    }
    char why[128] = "";
    bool stopped = mt_world_stop(NULL, 0, why, sizeof why);
    if (stopped)
        mt_world_resume();
    fprintf(stderr, "child: stopped %d (%s)\n", stopped, why);
    _exit(stopped ? 0 : 1);
}

/* A program whose main thread ended with pthread_exit while the others
 * go on (its leader stays a zombie in /proc/self/task): the others can be
 * stopped.  In a child. */
static void test_leader_gone(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_int_not_equal(child, -1);
    if (child == 0) {
        static int fds[2];
        pthread_t th, st;
        if (pipe(fds) != 0 || pthread_create(&th, NULL, wait_pipe, &fds[0]) != 0 ||
            pthread_create(&st, NULL, stop_after_leader, NULL) != 0)
            _exit(2);
        pthread_exit(NULL);
    }
    expect_exit_0(child);
}

static void *stop_forever(void *arg)
{
    (void)arg;
    char why[128];
    for (;;)
        if (mt_world_stop(NULL, 0, why, sizeof why))
            mt_world_resume();
    return NULL;
}

/* exec while another thread stops the world over and over (hook_exec.c's
 * sequence): a stop signal that reached the thread inside execve would be
 * pending in the new image, whose default action ends it.  Each of 200
 * children execs /bin/true, which must exit 0. */
static void test_exec_during_stops(void **state)
{
    (void)state;
    int killed = 0;
    for (int i = 0; i < 200; i++) {
        pid_t child = fork();
        assert_int_not_equal(child, -1);
        if (child == 0) {
            pthread_t th;
            if (pthread_create(&th, NULL, stop_forever, NULL) != 0)
                _exit(2);
            usleep(1000);
            mt_world_exec_begin();
            execl("/bin/true", "true", (char *)NULL);
            _exit(3);
        }
        int status = 0;
        assert_int_equal(waitpid(child, &status, 0), child);
        killed += WIFSIGNALED(status);
        assert_true(WIFSIGNALED(status) || WEXITSTATUS(status) == 0);
    }
    assert_int_equal(killed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rip_relative),
        cmocka_unit_test(test_short_jcc),
        cmocka_unit_test(test_call_rel32),
        cmocka_unit_test(test_endbr_kept),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_wx),
        cmocka_unit_test(test_alias),
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_thread_blocks_signals),
        cmocka_unit_test(test_thread_inside),
        cmocka_unit_test(test_stop_world),
        cmocka_unit_test(test_fork_during_stop),
        cmocka_unit_test(test_stack_read_under_vm_readv_kill),
        cmocka_unit_test(test_stack_unreadable),
        cmocka_unit_test(test_leader_gone),
        cmocka_unit_test(test_exec_during_stops),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
