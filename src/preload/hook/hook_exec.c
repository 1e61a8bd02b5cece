/* hook_exec.c -- the exec family: finalize the segment and the recording
 * before exec replaces the process.
 *
 * exec discards the process image without running destructors, so the
 * exec family is interposed.
 *
 * The segment gets a final snapshot, marked exited and exec'd
 * (MT_FLAG_EXITED | MT_FLAG_EXECED): if the new program loads libmemtop.so
 * too (LD_PRELOAD is usually inherited), it replaces this pid's segment
 * with its own; if it does not (an environment without LD_PRELOAD), the
 * segment says what it holds, the last state before the exec, instead of
 * looking like a running process that stopped publishing.
 *
 * The recording gets its final state and END record (reason exec) first,
 * in frames of their own, with recording still on.  The new image starts
 * its own recording if MEMTOP_RECORD asks for one.
 *
 * No world stop (alloc_stop.c) may signal this thread while it is inside
 * the exec call, and a stop signal still pending on it (it blocked the
 * signal when memtop tried to stop it) is taken off first: exec keeps
 * pending signals but not memtop's handler (mt_world_exec_begin).
 *
 * An exec from a signal handler that interrupted memtop (mt_tls_in_hook)
 * does neither: publishing then could wait for a lock the interrupted code
 * holds.  The last periodic snapshot stands, unmarked (README: "What is
 * exact").
 *
 * If the exec returns (it failed), both are taken back: the flags are
 * cleared, the recording's final frames are cut off again and it carries
 * on (errno is kept for the caller).  A vfork child runs in its parent's
 * memory: both steps see another pid and leave the parent's segment,
 * recording and exec count alone.  glibc's posix_spawn and system() exec
 * through internal calls, in a child: nothing to do there either.
 *
 * Threads may exec at the same time.  One count of the threads inside an
 * exec call, under one lock (g_exec): the first of them prepares the
 * recording and the publisher (each module's prepare, once; a module that
 * had nothing to prepare is tried again by the next exec), the others
 * wait for that under the lock (their image must not replace ours
 * mid-seal or mid-publish) and count themselves in, and only the last one
 * to come back from a failed exec undoes what was prepared: while any
 * thread may still be inside a successful exec, the file stays sealed and
 * no publisher runs to create a segment in the image being replaced.
 * Lock order (CONCURRENCY.md): g_exec.lock, then the modules' locks
 * (g_pub.life, g_pub.lock; the recording's).  An exit never takes it.
 */
#define _GNU_SOURCE
#include "alloc_stop.h"
#include "dat_format.h"
#include "core_common.h"
#include "core_spinlock.h"
#include "core_assert.h"
#include "core_nocancel.h"
#include "publish_thread.h"
#include "record.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "hook_exec.h"
#include "hook_next.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

/* The threads inside an exec call, and what the first of them prepared
 * (all under lock).  Not a fork lock: the child resets it (its holder is
 * not in the child). */
static struct {
    mt_spinlock lock;
    uint32_t n;  /* threads inside an exec call that counted in */
    bool sealed; /* the recording (mt_rec_exec_prepare) */
    bool marked; /* the publisher (mt_publisher_exec_prepare) */
} g_exec;

void mt_exec_child_reset(void)
{
    /* MT_RESET: only what differs (core_common.h); a single thread now */
    MT_RESET_ATOMIC(g_exec.lock.held, 0);
    MT_RESET(g_exec.n, 0);
    MT_RESET(g_exec.sealed, false);
    MT_RESET(g_exec.marked, false);
}

/* True if this exec counted itself in (after_exec must count it out). */
static bool prepare(void)
{
    mt_world_exec_begin(); /* no stop signal into the new image (alloc_stop.h) */
    if (mt_tls_in_hook || atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY)
        return false;
    (void)mt_in_hook_set(MT_IN_OWN);
    /* Before the lock: a vfork child must not touch its parent's lock, and
     * a child forked from a signal handler (no atfork reset) may have
     * inherited it held; in both, neither module is this process's. */
    bool in = mt_publisher_exec_mine() || mt_rec_exec_mine();
    if (in) {
        mt_spin_lock(&g_exec.lock);
        if (!g_exec.sealed) /* the recording first: its final state, then the publish */
            g_exec.sealed = mt_rec_exec_prepare();
        if (!g_exec.marked)
            g_exec.marked = mt_publisher_exec_prepare();
        g_exec.n++;
        mt_spin_unlock(&g_exec.lock);
    }
    mt_in_hook_restore(0);
    return in;
}

/* prepare and undo wait (nanosleep, pthread_join) and write the
 * recording, holding g_exec.lock: with the thread's cancellation disabled
 * (core_nocancel.h), and enabled again before the exec (a vfork child
 * shares its parent thread's descriptor). */
static bool before_exec(void)
{
    int cancel = mt_nocancel_begin();
    bool in = prepare();
    mt_nocancel_end(cancel);
    return in;
}

/* The exec returned: it failed. */
static int after_exec(bool in, int rc)
{
    mt_world_exec_end(); /* errno kept */
    if (!in)
        return rc;
    int err = errno;
    int cancel = mt_nocancel_begin();
    (void)mt_in_hook_set(MT_IN_OWN);
    mt_spin_lock(&g_exec.lock);
    MT_ASSERT(g_exec.n > 0);
    if (g_exec.n > 0 && --g_exec.n == 0) {
        if (g_exec.marked)
            mt_publisher_exec_undo();
        if (g_exec.sealed)
            mt_rec_exec_undo(err);
        g_exec.marked = false;
        g_exec.sealed = false;
    }
    mt_spin_unlock(&g_exec.lock);
    mt_in_hook_restore(0);
    mt_nocancel_end(cancel);
    errno = err;
    return rc;
}

/* The next definitions of the exec functions (hook_next.h: looked up once,
 * release/acquire), by the first call or by mt_exec_prebind. */
static _Atomic(void *) slot_execve, slot_execv, slot_execvp, slot_execvpe, slot_fexecve;

/* real_<name>: the next definition of name. */
#define REAL(name, type) type real_##name = (type)mt_next_fn(&slot_##name, #name);

void mt_exec_prebind(void)
{
    mt_next_fn(&slot_execve, "execve");
    mt_next_fn(&slot_execv, "execv");
    mt_next_fn(&slot_execvp, "execvp");
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

MT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve, execve_fn)
    bool in = before_exec();
    return after_exec(in, real_execve(path, argv, envp));
}

MT_EXPORT int execv(const char *path, char *const argv[])
{
    REAL(execv, execv_fn)
    bool in = before_exec();
    return after_exec(in, real_execv(path, argv));
}

MT_EXPORT int execvp(const char *file, char *const argv[])
{
    REAL(execvp, execv_fn)
    bool in = before_exec();
    return after_exec(in, real_execvp(file, argv));
}

MT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execvpe, execve_fn)
    bool in = before_exec();
    return after_exec(in, real_execvpe(file, argv, envp));
}

MT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    REAL(fexecve, fexecve_fn)
    bool in = before_exec();
    return after_exec(in, real_fexecve(fd, argv, envp));
}

/* execl, execlp, execle: collect the arguments, then the v variant. */
#define COLLECT_ARGS(first, ap, argv)                                                              \
    size_t argc_ = 1;                                                                              \
    va_list count_;                                                                                \
    va_copy(count_, ap);                                                                           \
    while (va_arg(count_, char *))                                                                 \
        argc_++;                                                                                   \
    va_end(count_);                                                                                \
    char *argv[argc_ + 1];                                                                         \
    argv[0] = (char *)(first);                                                                     \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                                         \
        argv[i_] = va_arg(ap, char *);

MT_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execv(path, argv);
}

MT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return execvp(file, argv);
}

MT_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
