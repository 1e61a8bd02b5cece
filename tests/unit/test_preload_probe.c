/* test_preload_probe.c -- the viewer's checks of the status record a
 * target that could not create its segment leaves in its memory
 * (src/ipc/preload_probe.c, mt_preload_judge): read from another process,
 * it is untrusted, so every field is checked and its path is cut at its
 * field and made printable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "preload_probe.h"

#define NSPID 1

static mt_status_record failed(uint32_t phase, int err, const char *path)
{
    mt_status_record r;
    memset(&r, 0, sizeof r);
    r.magic = MT_STATUS_MAGIC;
    r.version = MT_STATUS_VERSION;
    r.bytes = sizeof r;
    r.phase = phase;
    r.err = err;
    r.pid = NSPID;
    strcpy(r.path, path);
    return r;
}

static void test_enospc(void **state)
{
    (void)state;
    mt_status_record r = failed(MT_STATUS_SETUP, 28, "/dev/shm/memtop-1");
    char why[400], path[300];
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, path, sizeof path),
                     MT_PRELOAD_FAILED);
    assert_string_equal(why, "the target cannot create its segment: No space left on device "
                             "(/dev/shm/memtop-1)");
    assert_string_equal(path, "/dev/shm/memtop-1");
}

static void test_phases(void **state)
{
    (void)state;
    char why[400];
    mt_status_record r = failed(MT_STATUS_THREAD, 11, "");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_FAILED);
    assert_string_equal(why, "the target cannot start its publisher thread: Resource temporarily "
                             "unavailable");
    r = failed(MT_STATUS_PUBLISH, 1, "/dev/shm/memtop-1-00ff");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_FAILED);
    assert_non_null(strstr(why, "cannot publish its segment: Operation not permitted "
                                "(/dev/shm/memtop-1-00ff)"));
}

static void test_not_failed(void **state)
{
    (void)state;
    char why[400] = "";
    mt_status_record r = failed(MT_STATUS_NONE, 0, "");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_PENDING);
    /* a fork child's copy of its parent's failure is not its own */
    r = failed(MT_STATUS_CREATE, 24, "/dev/shm/memtop-1");
    assert_int_equal(mt_preload_judge(&r, NSPID + 1, why, sizeof why, NULL, 0), MT_PRELOAD_PENDING);
}

static void test_corrupt(void **state)
{
    (void)state;
    char why[400];
    mt_status_record r = failed(MT_STATUS_CREATE, 24, "x");
    r.version = 2;
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_UNKNOWN);
    r = failed(MT_STATUS_CREATE, 24, "x");
    r.bytes = 64;
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_UNKNOWN);
    r = failed(MT_STATUS_PHASES, 24, "x");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_UNKNOWN);
    r = failed(UINT32_MAX, 24, "x");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, NULL, 0), MT_PRELOAD_UNKNOWN);
}

static void test_hostile_strings(void **state)
{
    (void)state;
    char why[600], path[300];
    mt_status_record r = failed(MT_STATUS_CREATE, -5, "");
    memset(r.path, 'a', sizeof r.path); /* no NUL */
    r.path[3] = '\n';
    r.path[4] = '\033';
    assert_int_equal(mt_preload_judge(&r, NSPID, why, sizeof why, path, sizeof path),
                     MT_PRELOAD_FAILED);
    assert_int_equal(strlen(path), sizeof r.path - 1);
    assert_null(strchr(path, '\n'));
    assert_null(strchr(path, '\033'));
    assert_non_null(strstr(why, ": unknown error ("));
    r = failed(MT_STATUS_CREATE, 1 << 30, "/p");
    assert_int_equal(mt_preload_judge(&r, NSPID, why, 16, NULL, 0), MT_PRELOAD_FAILED);
    assert_int_equal(strlen(why), 15); /* cut to the caller's buffer */
}

/* The probe reads no mapping of a file on FUSE (its server could make the
 * read wait for ever): the device is looked up in the target's mountinfo. */
static void test_fuse_mount(void **state)
{
    (void)state;
    static const char text[] =
        "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
        "40 22 0:45 / /home/eve/m rw,nosuid,nodev shared:30 - fuse.evilfs evilfs rw,user_id=1001\n"
        "41 22 0:46 / /mnt/b rw master:2 - fuseblk /dev/sdb1 rw\n"
        "42 22 0:47 / /tmp rw shared:5 - tmpfs tmpfs rw\n"
        "43 22 0:48 / /odd rw - fuse\n";
    struct {
        dev_t dev;
        bool fuse;
    } cases[] = {{makedev(254, 1), false}, {makedev(0, 45), true}, {makedev(0, 46), true},
                 {makedev(0, 47), false},  {makedev(0, 48), true}, {makedev(0, 99), false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
        assert_non_null(f);
        assert_int_equal(mt_mountinfo_dev_is_fuse(f, cases[i].dev), cases[i].fuse);
        fclose(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enospc),          cmocka_unit_test(test_phases),
        cmocka_unit_test(test_not_failed),      cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_hostile_strings), cmocka_unit_test(test_fuse_mount),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
