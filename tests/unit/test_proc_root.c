/* test_proc_root.c -- mt_open_in_root (src/ipc/proc_root.c) where openat2
 * is missing: Linux before 5.6 (RHEL 8's 4.18), or a seccomp filter that
 * refuses it with ENOSYS or EPERM (container runtimes' older profiles).
 * There the path under /proc/PID/root is walked one name at a time and no
 * symbolic link or ".." on it is followed: a plain path opens, a link in
 * any place or a ".." is ELOOP.  With openat2 the same paths are
 * security_rootlink's business (a link is followed inside the root).
 *
 * Each case runs in a child that installs the filter (a filter cannot be
 * taken off again), on a tree under /tmp reached as /proc/<pid>/root/tmp/...
 * (this process's own root: "/proc/self" is not a root prefix). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "no_openat2.h"
#include "proc_root.h"

typedef struct tree {
    char dir[64];
} tree;

/* dir/d/f ("segment"), dir/l -> d, dir/lf -> d/f, dir/abs -> /etc */
static int setup(void **state)
{
    tree *t = calloc(1, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "/tmp/mt-proc-root-XXXXXX");
    char p[128];
    assert_non_null(mkdtemp(t->dir));
    snprintf(p, sizeof p, "%s/d", t->dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/d/f", t->dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("segment", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/l", t->dir);
    assert_int_equal(symlink("d", p), 0);
    snprintf(p, sizeof p, "%s/lf", t->dir);
    assert_int_equal(symlink("d/f", p), 0);
    snprintf(p, sizeof p, "%s/abs", t->dir);
    assert_int_equal(symlink("/etc", p), 0);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    tree *t = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    int rc = system(cmd);
    free(t);
    return rc == 0 ? 0 : -1;
}

/* In a child under a filter that refuses openat2 with err: open
 * /proc/<pid>/root<dir>/<rest>; 0 and the first bytes in buf, or -errno. */
static int open_refused(int err, const tree *t, const char *rest, int flags, char *buf, size_t n)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        char path[256];
        snprintf(path, sizeof path, "/proc/%d/root%s/%s", (int)getpid(), t->dir, rest);
        int rc = refuse_openat2(err) != 0 ? -1000 : 0;
        int fd = rc ? -1 : mt_open_in_root(path, flags);
        char out[64] = {0};
        if (!rc && fd < 0)
            rc = -errno;
        else if (fd >= 0)
            (void)!read(fd, out, sizeof out - 1);
        snprintf(out + strlen(out), sizeof out - strlen(out), "|%d", rc);
        (void)!write(pipefd[1], out, strlen(out));
        _exit(0);
    }
    close(pipefd[1]);
    char out[64] = {0};
    ssize_t got = read(pipefd[0], out, sizeof out - 1);
    close(pipefd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(got > 0 && WIFEXITED(status));
    char *bar = strrchr(out, '|');
    assert_non_null(bar);
    *bar = '\0';
    snprintf(buf, n, "%s", out);
    int rc = atoi(bar + 1);
    assert_int_not_equal(rc, -1000); /* the filter could not be installed */
    return rc;
}

static void expect(void **state, int err, const char *rest, int flags, int want, const char *data)
{
    char buf[64];
    int rc = open_refused(err, *state, rest, flags, buf, sizeof buf);
    if (rc != want)
        fail_msg("openat2 refused with %d, %s: got %d, want %d", err, rest, rc, want);
    if (data)
        assert_string_equal(buf, data);
}

static void test_plain_path_opens(void **state)
{
    expect(state, ENOSYS, "d/f", O_RDONLY | O_NOFOLLOW, 0, "segment");
    expect(state, EPERM, "d/f", O_RDONLY | O_NOFOLLOW, 0, "segment");
    expect(state, ENOSYS, "d//f", O_RDONLY, 0, "segment");
    expect(state, ENOSYS, "d/./f", O_RDONLY, 0, "segment");
    expect(state, ENOSYS, "d/nothing", O_RDONLY, -ENOENT, NULL);
}

static void test_no_link_is_followed(void **state)
{
    expect(state, ENOSYS, "l/f", O_RDONLY, -ELOOP, NULL); /* a directory that is a link */
    expect(state, EPERM, "l/f", O_RDONLY, -ELOOP, NULL);
    expect(state, ENOSYS, "abs/passwd", O_RDONLY, -ELOOP, NULL); /* out of the root */
    expect(state, ENOSYS, "lf", O_RDONLY, -ELOOP, NULL); /* the last name, O_NOFOLLOW or not */
}

static void test_what_is_refused_says_why(void **state)
{
    expect(state, ENOSYS, "lf", O_PATH | O_NOFOLLOW, -ELOOP, NULL); /* not the link itself */
    expect(state, ENOSYS, "d/f/x", O_RDONLY, -ENOTDIR, NULL);       /* a file, not a link */
    expect(state, ENOSYS, "d/f/", O_RDONLY, -ENOTDIR, NULL);        /* "name/": a directory */
    expect(state, ENOSYS, "d/", O_PATH | O_DIRECTORY, 0, NULL);
}

static void test_no_dotdot(void **state)
{
    expect(state, ENOSYS, "d/../d/f", O_RDONLY, -ELOOP, NULL);
    expect(state, ENOSYS, "../../../../../../etc/passwd", O_RDONLY, -ELOOP, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_path_opens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_link_is_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_what_is_refused_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_dotdot, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
