/* test_safe_file.c -- unit tests of src/symbolize/safe_file.c: which files
 * the symbolizer trusts as they are, that a FIFO, a device or a missing
 * file is refused without blocking, and that another user's file is read
 * from a sealed, bounded copy.  The copy tests chown a file to nobody and
 * are skipped when not run as root (CI runs as root). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "safe_file.h"

#define NOBODY 65534

static char dir[] = "/tmp/memtop-safe-XXXXXX";

static void in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static struct stat attrs(uid_t uid, gid_t gid, mode_t mode)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_uid = uid;
    st.st_gid = gid;
    st.st_mode = S_IFREG | mode;
    return st;
}

static void test_trust_decision(void **state)
{
    (void)state;
    const uid_t me = 1000;
    const gid_t mine = 1000;
    struct {
        struct stat st;
        bool trusted;
    } cases[] = {
        {attrs(0, 0, 0755), true},        /* /usr/lib */
        {attrs(me, mine, 0644), true},    /* the viewer's own build */
        {attrs(me, mine, 0664), true},    /* ... in the viewer's own group */
        {attrs(0, 0, 0775), true},        /* group root */
        {attrs(1001, 1001, 0644), false}, /* another user's */
        {attrs(1001, 0, 0444), false},    /* another user's, read-only: chmod is theirs */
        {attrs(0, 0, 0666), false},       /* anybody can truncate it */
        {attrs(me, mine, 0646), false},   {attrs(0, 1001, 0664), false}, /* another group can */
        {attrs(me, 1001, 0775), false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (mt_stat_trusted(&cases[i].st, me, mine) != cases[i].trusted)
            fail_msg("case %zu: trusted should be %d", i, cases[i].trusted);
    }
}

static void test_path_trusted(void **state)
{
    (void)state;
    assert_true(mt_path_trusted("/etc/passwd"));
    char path[256];
    in_dir(path, sizeof path, "lib.so"); /* under sticky, world-writable /tmp */
    assert_false(mt_path_trusted(path));
    assert_false(mt_path_trusted("relative/lib.so"));
    assert_false(mt_path_trusted("/nonexistent-memtop-dir/lib.so"));
}

static void test_open_regular(void **state)
{
    (void)state;
    char fifo[256], file[256], link[256];
    in_dir(fifo, sizeof fifo, "fifo");
    in_dir(file, sizeof file, "file");
    in_dir(link, sizeof link, "link");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int w = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    assert_true(w >= 0);
    close(w);
    assert_int_equal(symlink(file, link), 0);

    struct stat st;
    const char *why = NULL;
    /* a FIFO nobody writes to: refused at once (a blocking open hangs here) */
    assert_int_equal(mt_open_regular(fifo, &st, &why), -1);
    assert_string_equal(why, "no file (JIT/vdso)");
    assert_int_equal(mt_open_regular("/dev/null", &st, &why), -1);
    assert_string_equal(why, "no file (JIT/vdso)");
    in_dir(fifo, sizeof fifo, "missing");
    assert_int_equal(mt_open_regular(fifo, &st, &why), -1);
    assert_string_equal(why, "file deleted");
    int fd = mt_open_regular(link, &st, &why); /* links on the way are followed */
    assert_true(fd >= 0);
    assert_true(S_ISREG(st.st_mode));
    close(fd);
}

/* A file with content bytes; its descriptor and stat. */
static int make_file(const char *name, size_t size, struct stat *st)
{
    char path[256];
    in_dir(path, sizeof path, name);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    assert_true(fd >= 0);
    for (size_t i = 0; i < size; i++) {
        char c = (char)(i * 7);
        assert_int_equal(write(fd, &c, 1), 1);
    }
    assert_int_equal(fstat(fd, st), 0);
    return fd;
}

static void test_own_file_as_is(void **state)
{
    (void)state;
    struct stat st;
    int fd = make_file("own", 100, &st);
    const char *why = NULL;
    assert_int_equal(mt_stable_fd(fd, &st, MT_COPY_LIMIT, &why), fd);
    close(fd);
}

/* A file reached through another process is copied even when it is the
 * viewer's own: its owner says nothing about who can change it. */
static void test_reached_through_target_copied(void **state)
{
    (void)state;
    struct stat st;
    int fd = make_file("own", 100, &st);
    const char *why = NULL;
    int copy = mt_copy_fd(fd, &st, MT_COPY_LIMIT, &why);
    assert_true(copy >= 0);
    assert_int_equal(fcntl(copy, F_GET_SEALS) & F_SEAL_SHRINK, F_SEAL_SHRINK);
    close(copy);
}

static void test_foreign_file_copied(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    struct stat st;
    int fd = make_file("foreign", 10000, &st);
    assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
    assert_int_equal(fstat(fd, &st), 0);
    const char *why = NULL;
    int copy = mt_stable_fd(dup(fd), &st, MT_COPY_LIMIT, &why);
    assert_true(copy >= 0);
    assert_int_equal(fcntl(copy, F_GET_SEALS),
                     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    struct stat cs;
    assert_int_equal(fstat(copy, &cs), 0);
    assert_int_equal(cs.st_size, 10000);
    char a[10000], b[10000];
    assert_int_equal(pread(fd, a, sizeof a, 0), sizeof a);
    assert_int_equal(pread(copy, b, sizeof b, 0), sizeof b);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(ftruncate(copy, 0), -1); /* sealed */
    close(copy);

    /* the size at open and the file now differ: it changed while copied */
    assert_int_equal(ftruncate(fd, 5000), 0);
    why = NULL;
    assert_int_equal(mt_stable_fd(dup(fd), &st, MT_COPY_LIMIT, &why), -1);
    assert_string_equal(why, "file changed");
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(mt_stable_fd(dup(fd), &st, 4096, &why), -1);
    assert_string_equal(why, "file too large to copy safely");
    close(fd);
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"fifo", "file", "link", "own", "foreign"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        in_dir(path, sizeof path, names[i]);
        unlink(path);
    }
    return rmdir(dir);
}

/* Writes text into path (created or emptied). */
static void put(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* A child in its own mount namespace, a tmpfs over mnt holding "inside"
 * and link -> mnt/inside (absolute); the viewer's mnt/inside says
 * "outside".  The child waits for a byte on ready[1]'s pipe to end. */
static pid_t namespaced_child(const char *mnt, int sync[2])
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    char path[300], target[300];
    snprintf(path, sizeof path, "%s/inside", mnt);
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("memtop-test", mnt, "tmpfs", 0, NULL) != 0)
        _exit(1);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    snprintf(target, sizeof target, "%s/link", mnt);
    if (fd < 0 || write(fd, "inside", 6) != 6 || symlink(path, target) != 0)
        _exit(1);
    char c = 'r';
    if (write(sync[1], &c, 1) != 1 || read(sync[0], &c, 1) < 0)
        _exit(1);
    _exit(0);
}

/* A symlink in a target's root is followed inside that root, never into
 * the viewer's files (issue 13: symbols through /proc/PID/root). */
static void test_open_in_target_root(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char mnt[256], outside[300], path[400];
    in_dir(mnt, sizeof mnt, "mnt");
    assert_int_equal(mkdir(mnt, 0755), 0);
    snprintf(outside, sizeof outside, "%s/inside", mnt);
    put(outside, "outside");
    int to_child[2], from_child[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(from_child), 0);
    int sync[2] = {to_child[0], from_child[1]};
    pid_t pid = namespaced_child(mnt, sync);
    close(from_child[1]); /* a child that fails early ends the read below (EOF) */
    close(to_child[0]);
    char c = 0;
    bool ready = read(from_child[0], &c, 1) == 1;
    snprintf(path, sizeof path, "/proc/%d/root%s/link", (int)pid, mnt);
    struct stat st;
    const char *why;
    int fd = ready ? mt_open_regular(path, &st, &why) : -1;
    char got[16] = "";
    if (fd >= 0 && read(fd, got, sizeof got - 1) < 0)
        got[0] = '\0';
    if (fd >= 0)
        close(fd);
    if (ready) /* else the child is gone: the write would raise SIGPIPE */
        (void)!write(to_child[1], "x", 1);
    close(to_child[1]);
    close(from_child[0]);
    int status;
    waitpid(pid, &status, 0);
    unlink(outside);
    rmdir(mnt);
    if (!ready)
        skip(); /* no mount namespace here (a chroot, a container) */
    assert_string_equal(got, "inside");
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trust_decision),
        cmocka_unit_test(test_path_trusted),
        cmocka_unit_test(test_open_regular),
        cmocka_unit_test(test_own_file_as_is),
        cmocka_unit_test(test_foreign_file_copied),
        cmocka_unit_test(test_open_in_target_root),
        cmocka_unit_test(test_reached_through_target_copied),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
