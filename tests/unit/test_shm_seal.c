/* test_shm_seal.c -- unit tests of the segment's name and lock
 * (src/preload/publish/publish_shm.c, compiled on its own).
 *
 * Two targets with one pid, each in a PID namespace of its own sharing
 * /dev/shm (the containers of one pod), may seal their segments at the
 * same moment: each must end up under a name of its own, neither may
 * replace the other's segment.  A race cannot be forced from outside, so
 * these are stress tests: each round forks two sealers that create a
 * segment for one made-up pid, meet at a spin barrier and seal at once;
 * each reports the inode of its file and the name it took, and lives on
 * (holding its segment) until the parent has checked that each name holds
 * its sealer's file.  Three setups: the name free; a dead process's
 * leftover under memtop-<pid> (one of the two replaces it); memtop-<pid>
 * held by a live process and a leftover memtop-<pid>-<hex> (at most one
 * takes it).  Two interleavings too narrow to meet by chance are forced
 * through this file's own flock and renameat2 (publish_shm.c calls them,
 * not libc's): another sealer replaces the leftover between this one's
 * open and its lock, or removes it without the lock (rm) and a third
 * takes the name between this one's check and its rename.
 *
 * A leftover whose exclusive lock a viewer's probe holds (`--list`,
 * `--clean`) is waited for, not taken for a running process's segment.
 *
 * And the lock's holder: a child made without the atfork handlers (a raw
 * clone, _Fork) must not keep the segment's lock once the target is gone,
 * or the next target with that pid would publish aside for as long as the
 * child lives.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_log.h"
#include "core_procinfo.h"
#include "publish_shm.h"
#include "shm_lock.h"

#define PID 4242
#define ROUNDS 400
#define ASIDE_LEFTOVER "memtop-4242-00000000deadbeef"

/* --- what publish_shm.c calls ---------------------------------------------- */

void mt_log(int level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

uint64_t mt_self_start_ticks(void)
{
    return 0;
}

void mt_proc_exe(char *out, size_t cap)
{
    snprintf(out, cap, "test_shm_seal");
}

void mt_proc_cmdline(char *out, size_t cap)
{
    snprintf(out, cap, "test_shm_seal");
}

/* --- flock and renameat2, with a hook run once before the real call ------ */

static void (*g_before_lock_ex)(void);
static void (*g_before_exchange)(void);
static bool g_no_exchange; /* as a file system without RENAME_EXCHANGE */

int flock(int fd, int op)
{
    void (*hook)(void) = g_before_lock_ex;
    if (hook && (op & LOCK_EX)) {
        g_before_lock_ex = NULL;
        hook();
    }
    return (int)syscall(SYS_flock, fd, op);
}

int renameat2(int ofd, const char *from, int nfd, const char *to, unsigned flags)
{
    void (*hook)(void) = g_before_exchange;
    if (hook && (flags & RENAME_EXCHANGE)) {
        g_before_exchange = NULL;
        hook();
    }
    if (g_no_exchange && (flags & RENAME_EXCHANGE)) {
        errno = EINVAL;
        return -1;
    }
    return (int)syscall(SYS_renameat2, ofd, from, nfd, to, flags);
}

/* --- a directory of our own in /dev/shm (tmpfs, as in production) ------- */

static char g_dir[256];

static int make_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "%s", "/dev/shm/test_shm_seal.XXXXXX");
    if (!mkdtemp(g_dir)) {
        snprintf(g_dir, sizeof g_dir, "%s", "/tmp/test_shm_seal.XXXXXX");
        if (!mkdtemp(g_dir))
            return -1;
    }
    return 0;
}

static void empty_dir(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..") != 0))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

static int remove_dir(void **state)
{
    (void)state;
    empty_dir();
    rmdir(g_dir);
    return 0;
}

/* A regular file of ours, name in g_dir; its descriptor. */
static int plant(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    return fd;
}

/* --- two sealers at once --------------------------------------------------- */

typedef struct report {
    bool ok;
    ino_t ino;
    char path[MT_PATH_MAX + 32];
} report;

typedef struct sealer {
    pid_t pid;
    int out; /* its report */
} sealer;

/* In the child: creates, waits for the other at the barrier, seals,
 * reports, and holds its segment until killed. */
static void seal_child(atomic_int *barrier, int out)
{
    mt_shm_writer w;
    report r = {0};
    bool made = mt_shm_create(&w, g_dir, PID);
    struct stat st;
    if (made && fstat(w.fd, &st) == 0)
        r.ino = st.st_ino;
    atomic_fetch_add(barrier, 1);
    while (atomic_load(barrier) < 2)
        ;
    r.ok = made && mt_shm_seal(&w);
    snprintf(r.path, sizeof r.path, "%s", w.path);
    if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(2);
    for (;;)
        pause();
}

static sealer start_sealer(atomic_int *barrier)
{
    int out[2];
    assert_int_equal(pipe(out), 0);
    sealer s = {fork(), out[0]};
    assert_true(s.pid >= 0);
    if (s.pid == 0) {
        close(out[0]);
        seal_child(barrier, out[1]);
    }
    close(out[1]);
    return s;
}

static report end_sealer(sealer s)
{
    report r = {0};
    if (read(s.out, &r, sizeof r) != (ssize_t)sizeof r)
        r.ok = false;
    return r;
}

static void reap(sealer s)
{
    kill(s.pid, SIGKILL);
    close(s.out);
    waitpid(s.pid, NULL, 0);
}

/* The file at path is inode ino. */
static bool holds(const char *path, ino_t ino)
{
    struct stat st;
    return lstat(path, &st) == 0 && st.st_ino == ino;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One round: both sealed, under two names, each holding its own file;
 * NULL, or what went wrong. */
static const char *race_once(atomic_int *barrier, report r[2])
{
    atomic_store(barrier, 0);
    sealer s[2] = {start_sealer(barrier), start_sealer(barrier)};
    r[0] = end_sealer(s[0]);
    r[1] = end_sealer(s[1]);
    const char *why = NULL;
    if (!r[0].ok || !r[1].ok)
        why = "a sealer failed";
    else if (strcmp(r[0].path, r[1].path) == 0)
        why = "both took one name: the second replaced the first's segment";
    else if (!holds(r[0].path, r[0].ino) || !holds(r[1].path, r[1].ino))
        why = "a name does not hold its sealer's file";
    reap(s[0]);
    reap(s[1]);
    return why;
}

enum setup { FREE, LEFTOVER, HELD_ASIDE };

static void race(enum setup setup)
{
    atomic_int *barrier =
        mmap(NULL, sizeof *barrier, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(barrier != MAP_FAILED);
    int fails = 0, first = -1, exact = 0, aside = 0;
    const char *why = NULL;
    for (int i = 0; i < ROUNDS; i++) {
        empty_dir();
        int held = -1;
        if (setup == LEFTOVER)
            close(plant("memtop-4242"));
        if (setup == HELD_ASIDE) {
            held = plant("memtop-4242"); /* a running process's segment */
            assert_int_equal(flock(held, LOCK_SH | LOCK_NB), 0);
            close(plant(ASIDE_LEFTOVER));
        }
        report r[2];
        const char *w = race_once(barrier, r);
        for (int k = 0; k < 2 && !w; k++) {
            const char *name = base_name(r[k].path);
            exact += strcmp(name, "memtop-4242") == 0;
            aside += strcmp(name, ASIDE_LEFTOVER) == 0;
            if (setup == HELD_ASIDE && strcmp(name, "memtop-4242") == 0)
                w = "took the name a running process holds";
        }
        if (w && fails++ == 0) {
            first = i;
            why = w;
        }
        if (held >= 0)
            close(held);
    }
    munmap(barrier, sizeof *barrier);
    if (fails)
        fail_msg("%d of %d rounds wrong, first round %d: %s", fails, ROUNDS, first, why);
    /* Every round, exactly one takes the free or dead name. */
    if (setup != HELD_ASIDE)
        assert_int_equal(exact, ROUNDS);
    else
        assert_true(aside <= ROUNDS && exact == 0);
    printf("%d rounds: %d took memtop-%d, %d the leftover beside it\n", ROUNDS, exact, PID, aside);
}

static void test_race_free_name(void **state)
{
    (void)state;
    race(FREE);
}

static void test_race_over_leftover(void **state)
{
    (void)state;
    race(LEFTOVER);
}

static void test_race_for_leftover_aside(void **state)
{
    (void)state;
    race(HELD_ASIDE);
}

/* --- forced interleavings, in one process ------------------------------- */

static mt_shm_writer g_other; /* the other sealer, sealed by a hook */

static void other_seals(void)
{
    assert_true(mt_shm_create(&g_other, g_dir, PID));
    assert_true(mt_shm_seal(&g_other));
}

static void other_seals_after_rm(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/memtop-%d", g_dir, PID);
    assert_int_equal(unlink(path), 0); /* the leftover, removed without its lock */
    other_seals();
}

/* A leftover at memtop-<pid>; `hook` runs inside our seal; then both
 * writers must hold names of their own, the other's memtop-<pid>. */
static void forced(void (**at)(void), void (*hook)(void), bool no_exchange)
{
    g_no_exchange = no_exchange;
    empty_dir();
    close(plant("memtop-4242"));
    mt_shm_writer w;
    assert_true(mt_shm_create(&w, g_dir, PID));
    struct stat mine, other;
    assert_int_equal(fstat(w.fd, &mine), 0);
    *at = hook;
    assert_true(mt_shm_seal(&w));
    assert_null(*at); /* the hook ran */
    assert_int_equal(fstat(g_other.fd, &other), 0);
    assert_string_equal(base_name(g_other.path), "memtop-4242");
    assert_true(holds(g_other.path, other.st_ino));
    assert_string_not_equal(w.path, g_other.path);
    assert_true(holds(w.path, mine.st_ino));
    munmap(w.base, w.bytes); /* mt_shm_forget leaves it to a fork child */
    munmap(g_other.base, g_other.bytes);
    mt_shm_forget(&w);
    mt_shm_forget(&g_other);
    g_no_exchange = false;
}

/* The other sealer locks the leftover, replaces it and lets go between our
 * open of it and our lock: we then hold the lock of a file that is no
 * longer the name's, and must not rename over what is there now. */
static void test_leftover_replaced_before_our_lock(void **state)
{
    (void)state;
    forced(&g_before_lock_ex, other_seals, false);
}

/* The same where the names cannot be exchanged: only the check under the
 * lock, before the rename, sees it. */
static void test_leftover_replaced_before_our_lock_no_exchange(void **state)
{
    (void)state;
    forced(&g_before_lock_ex, other_seals, true);
}

/* Someone removes the leftover without its lock and the other sealer
 * takes the free name between our check and our rename: what our rename
 * displaces is not the leftover we locked, and must be put back. */
static void test_name_retaken_before_our_rename(void **state)
{
    (void)state;
    forced(&g_before_exchange, other_seals_after_rm, false);
}

/* --- a viewer's probe holding a leftover's exclusive lock ---------------- */

/* A child that takes the exclusive lock of g_dir/name, says so on `ready`
 * and lets go after ms milliseconds, as `memtop --list` or `--clean` does
 * (for microseconds) while it looks at a leftover. */
static pid_t hold_exclusive(const char *name, int ms)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = plant(name);
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 || write(ready[1], "x", 1) != 1)
            _exit(2);
        struct timespec t = {0, ms * 1000000L};
        nanosleep(&t, NULL);
        _exit(0); /* the lock goes with the process */
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    close(ready[1]);
    return pid;
}

/* A target that seals while a probe holds its pid's leftover takes the
 * name once the probe lets go; before, it published under a random name,
 * taking the probe for a live target in another PID namespace. */
static void test_leftover_probed_while_sealing(void **state)
{
    (void)state;
    empty_dir();
    pid_t probe = hold_exclusive("memtop-4242", 30);
    mt_shm_writer w;
    assert_true(mt_shm_create(&w, g_dir, PID));
    assert_true(mt_shm_seal(&w));
    waitpid(probe, NULL, 0);
    if (strcmp(base_name(w.path), "memtop-4242") != 0)
        fail_msg("sealed as %s while a probe held the leftover memtop-4242", base_name(w.path));
    munmap(w.base, w.bytes);
    mt_shm_forget(&w);
}

/* --- children made without the atfork handlers --------------------------- */

static pid_t raw_clone(void)
{
    return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
static pid_t glibc_fork(void)
{
    return _Fork();
}
#endif

/* The target (a child of ours): creates and seals its segment, makes a
 * child with make_child that only sleeps, sends its pid, and ends (no
 * unlink: as when killed) when `go` says so. */
static void target(pid_t (*make_child)(void), int out, int go)
{
    mt_shm_writer w;
    if (!mt_shm_create(&w, g_dir, PID + 1) || !mt_shm_seal(&w))
        _exit(2);
    pid_t child = make_child();
    if (child == 0)
        for (;;)
            pause();
    char c;
    if (write(out, &child, sizeof child) != (ssize_t)sizeof child || read(go, &c, 1) != 1)
        _exit(3);
    _exit(0);
}

/* Busy (mt_shm_lock_leftover) while the target lives, free once it has
 * ended, though its child still lives. */
static void lock_outlives_target(pid_t (*make_child)(void))
{
    empty_dir();
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* the grandchild is ours to reap */
    int out[2], go[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(go), 0);
    pid_t t = fork();
    assert_true(t >= 0);
    if (t == 0)
        target(make_child, out[1], go[0]);
    pid_t child = -1;
    assert_int_equal(read(out[0], &child, sizeof child), sizeof child);
    char name[64];
    snprintf(name, sizeof name, "memtop-%d", PID + 1);
    int dfd = open(g_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool busy;
    int fd = mt_shm_lock_leftover(dfd, name, &busy);
    bool busy_while_target = fd < 0 && busy;
    assert_int_equal(write(go[1], "x", 1), 1);
    assert_int_equal(waitpid(t, NULL, 0), t);
    bool child_lives = kill(child, 0) == 0;
    if (fd < 0)
        fd = mt_shm_lock_leftover(dfd, name, &busy);
    bool free_after = fd >= 0;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (fd >= 0)
        close(fd);
    close(dfd);
    close(out[0]);
    close(out[1]);
    close(go[0]);
    close(go[1]);
    assert_true(busy_while_target);
    assert_true(child_lives);
    if (!free_after)
        fail_msg("%s is still locked after its target ended: its child %d holds it", name,
                 (int)child);
}

static void test_raw_clone_child_keeps_no_lock(void **state)
{
    (void)state;
    lock_outlives_target(raw_clone);
}

static void test_fork_without_handlers_keeps_no_lock(void **state)
{
    (void)state;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    lock_outlives_target(glibc_fork);
#else
    skip(); /* no _Fork before glibc 2.34 */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_race_free_name),
        cmocka_unit_test(test_race_over_leftover),
        cmocka_unit_test(test_race_for_leftover_aside),
        cmocka_unit_test(test_leftover_replaced_before_our_lock),
        cmocka_unit_test(test_leftover_replaced_before_our_lock_no_exchange),
        cmocka_unit_test(test_name_retaken_before_our_rename),
        cmocka_unit_test(test_leftover_probed_while_sealing),
        cmocka_unit_test(test_raw_clone_child_keeps_no_lock),
        cmocka_unit_test(test_fork_without_handlers_keeps_no_lock),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
