/* pf_api.c -- pitfall 7: corner cases of the allocation API.
 *
 * Checks itself (exit 99 on a violation) what the C library guarantees:
 * realloc(NULL,n), realloc(p,0), free(NULL), posix_memalign's error
 * returns, aligned_alloc/memalign with an impossible alignment, calloc and
 * reallocarray overflow, errno preservation, malloc_usable_size and the
 * alignment of every returned pointer.  Results that are glibc-specific
 * (e.g. aligned_alloc(3, n)) are printed instead, and the driver compares
 * the output with and without the preload.  Marker sizes let the driver
 * check the accounting: 1201 realloc(NULL), 1213 realloc(p,0), 1217 and
 * 1223 blocks whose failed reallocarray/realloc must leave them intact.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>

#define SENTINEL_ERRNO 1234

/* Sizes the compiler cannot see through (no -Walloc-size warnings). */
static volatile size_t g_huge = SIZE_MAX - 4096;
static volatile size_t g_half = SIZE_MAX / 2 + 1;
static volatile size_t g_bad_align = SIZE_MAX / 2 + 2;
static size_t g_page;

static int aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

static void check_block(void *p, size_t n, size_t align)
{
    PF_CHECK(p != NULL, "allocation of %zu failed", n);
    PF_CHECK(aligned(p, align), "%p not aligned to %zu", p, align);
    PF_CHECK(malloc_usable_size(p) >= n, "usable %zu < %zu", malloc_usable_size(p), n);
    memset(p, 0xa5, n);
}

static void test_realloc(void)
{
    char *p = realloc(NULL, 1201);
    check_block(p, 1201, 16);
    strcpy(p, "keep");
    p = realloc(p, 200000); /* grows past the mmap threshold */
    PF_CHECK(p != NULL && strcmp(p, "keep") == 0, "realloc lost the contents");
    check_block(p, 200000, 16);
    free(p);
    char *q = malloc(1213);
    check_block(q, 1213, 16);
    errno = SENTINEL_ERRNO;
    PF_CHECK(realloc(q, 0) == NULL, "realloc(p, 0) returned non-NULL");
    PF_CHECK(errno == SENTINEL_ERRNO, "realloc(p,0) changed errno to %d", errno);
    char *r = malloc(1223);
    strcpy(r, "intact");
    errno = 0;
    PF_CHECK(realloc(r, g_half) == NULL && errno == ENOMEM, "huge realloc must fail ENOMEM");
    PF_CHECK(strcmp(r, "intact") == 0, "failed realloc damaged the block");
    free(r);
}

static void test_realloc_content(void)
{
    unsigned char *p = malloc(10);
    for (int i = 0; i < 10; i++)
        p[i] = (unsigned char)i;
    p = realloc(p, 300000);
    PF_CHECK(p && p[9] == 9, "content lost growing");
    p = realloc(p, 5);
    PF_CHECK(p && p[4] == 4, "content lost shrinking");
    free(p);
}

static void test_free_null(void)
{
    errno = SENTINEL_ERRNO;
    free(NULL);
    PF_CHECK(errno == SENTINEL_ERRNO, "free(NULL) changed errno");
}

static void test_posix_memalign(void)
{
    static const size_t bad[] = {0, 1, 3, 4, 24, 48, 4097};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        void *p = (void *)0x1;
        errno = SENTINEL_ERRNO;
        int rc = posix_memalign(&p, bad[i], 64);
        PF_CHECK(rc == EINVAL, "posix_memalign(align %zu) returned %d", bad[i], rc);
        PF_CHECK(errno == SENTINEL_ERRNO, "posix_memalign changed errno to %d", errno);
        printf("posix_memalign bad align %zu: p %s\n", bad[i], p == (void *)0x1 ? "kept" : "set");
    }
    void *p;
    errno = SENTINEL_ERRNO;
    PF_CHECK(posix_memalign(&p, 64, g_huge) == ENOMEM, "huge posix_memalign must be ENOMEM");
    PF_CHECK(errno == SENTINEL_ERRNO, "failed posix_memalign changed errno");
    for (size_t a = sizeof(void *); a <= 65536; a *= 2) {
        errno = SENTINEL_ERRNO;
        PF_CHECK(posix_memalign(&p, a, a * 3 + 1) == 0, "posix_memalign(%zu) failed", a);
        PF_CHECK(errno == SENTINEL_ERRNO, "posix_memalign success changed errno");
        check_block(p, a * 3 + 1, a);
        free(p);
    }
}

static void print_result(const char *what, void *p, int err)
{
    printf("%s: %s errno %d\n", what, p ? "ok" : "NULL", p ? 0 : err);
    free(p);
}

static void test_aligned_alloc(void)
{
    errno = 0;
    PF_CHECK(aligned_alloc(g_bad_align, 64) == NULL && errno == EINVAL,
             "aligned_alloc with impossible alignment must fail EINVAL (errno %d)", errno);
    errno = 0;
    PF_CHECK(memalign(g_bad_align, 64) == NULL && errno == EINVAL,
             "memalign with impossible alignment must fail EINVAL (errno %d)", errno);
    errno = 0;
    PF_CHECK(aligned_alloc(64, g_huge) == NULL && errno == ENOMEM, "huge aligned_alloc");
    errno = 0;
    PF_CHECK(memalign(64, g_huge) == NULL && errno == ENOMEM, "huge memalign");
    static const size_t odd[] = {0, 1, 3, 24, 100};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        char what[64];
        errno = 0;
        void *p = aligned_alloc(odd[i], 256);
        snprintf(what, sizeof what, "aligned_alloc(%zu, 256)", odd[i]);
        print_result(what, p, errno);
        errno = 0;
        p = memalign(odd[i], 256);
        snprintf(what, sizeof what, "memalign(%zu, 256)", odd[i]);
        print_result(what, p, errno);
    }
    for (size_t a = 1; a <= 1u << 20; a *= 2) {
        void *p = aligned_alloc(a, a * 2);
        check_block(p, a * 2, a);
        free(p);
        p = memalign(a, a + 3);
        check_block(p, a + 3, a);
        free(p);
    }
}

static void test_overflow(void)
{
    errno = 0;
    PF_CHECK(calloc(g_half, 2) == NULL && errno == ENOMEM, "calloc overflow (errno %d)", errno);
    errno = 0;
    PF_CHECK(calloc(2, g_half) == NULL && errno == ENOMEM, "calloc overflow (errno %d)", errno);
    errno = 0;
    PF_CHECK(reallocarray(NULL, g_half, 4) == NULL && errno == ENOMEM, "reallocarray overflow");
    char *p = malloc(1217);
    strcpy(p, "intact");
    errno = 0;
    PF_CHECK(reallocarray(p, 4, g_half) == NULL && errno == ENOMEM, "reallocarray overflow");
    PF_CHECK(strcmp(p, "intact") == 0, "failed reallocarray damaged the block");
    free(p);
    errno = 0;
    PF_CHECK(malloc(g_huge) == NULL && errno == ENOMEM, "malloc(huge) must fail ENOMEM");
    errno = 0;
    PF_CHECK(valloc(g_huge) == NULL && errno == ENOMEM, "valloc(huge) must fail ENOMEM");
    errno = 0;
    PF_CHECK(pvalloc(g_huge) == NULL && errno == ENOMEM, "pvalloc(huge) must fail ENOMEM");
}

/* errno must survive every successful call and every free. */
static void test_errno(void)
{
    void *p[10];
    errno = SENTINEL_ERRNO;
    p[0] = malloc(100);
    p[1] = calloc(3, 33);
    p[2] = realloc(malloc(10), 1000);
    p[3] = reallocarray(NULL, 7, 9);
    p[4] = aligned_alloc(64, 128);
    p[5] = memalign(128, 100);
    p[6] = valloc(100);
    p[7] = pvalloc(100);
    p[8] = malloc(0);
    PF_CHECK(posix_memalign(&p[9], 32, 50) == 0, "posix_memalign");
    PF_CHECK(errno == SENTINEL_ERRNO, "an allocation changed errno to %d", errno);
    for (int i = 0; i < 10; i++) {
        PF_CHECK(p[i] != NULL, "allocation %d failed", i);
        (void)malloc_usable_size(p[i]);
        errno = SENTINEL_ERRNO;
        free(p[i]);
        PF_CHECK(errno == SENTINEL_ERRNO, "free changed errno to %d", errno);
    }
    PF_CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
}

static void test_alignment(void)
{
    for (size_t n = 1; n <= 3000; n += 7) {
        void *a = malloc(n), *b = calloc(1, n), *c = realloc(NULL, n);
        check_block(a, n, 16);
        check_block(b, n, 16);
        check_block(c, n, 16);
        free(a);
        free(b);
        free(c);
    }
    for (size_t n = 1; n <= 3 * g_page; n += 1000) {
        void *v = valloc(n), *pv = pvalloc(n);
        check_block(v, n, g_page);
        check_block(pv, (n + g_page - 1) / g_page * g_page, g_page);
        free(v);
        free(pv);
    }
}

static void test_calloc_zeroes(void)
{
    for (int round = 0; round < 50; round++) {
        size_t n = 5000 + (size_t)round * 100;
        char *p = malloc(n);
        memset(p, 0xff, n);
        free(pf_escape(p));
        char *z = calloc(1, n);
        PF_CHECK(z != NULL, "calloc failed");
        for (size_t i = 0; i < n; i++)
            PF_CHECK(z[i] == 0, "calloc memory not zero at %zu", i);
        free(z);
    }
}

int main(void)
{
    g_page = (size_t)sysconf(_SC_PAGESIZE);
    test_realloc();
    test_realloc_content();
    test_free_null();
    test_posix_memalign();
    test_aligned_alloc();
    test_overflow();
    test_errno();
    test_alignment();
    test_calloc_zeroes();
    void *z = malloc(0);
    printf("malloc(0): %s\n", z ? "non-NULL" : "NULL");
    free(z);
    printf("api ok\n");
    return 0;
}
