/* core_assert.h -- MT_ASSERT: an invariant checked in debug builds.
 *
 * Where an invariant is enforced (CONCURRENCY.md lists them), MT_ASSERT
 * states it and a debug build (no NDEBUG: CMAKE_BUILD_TYPE=Debug) checks
 * it; release builds (NDEBUG) compile it out, the condition unevaluated.
 * It runs inside the target, in hooks that may be in a signal handler or
 * between fork and exec: a failure writes one line to stderr with write(2)
 * (no stdio, no malloc: async-signal-safe) and abort()s.  Header-only so
 * that the tests compiling preload sources on their own need nothing more.
 */
#ifndef MT_CORE_ASSERT_H
#define MT_CORE_ASSERT_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static __attribute__((unused)) void mt_assert_put(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(2, s, n);
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* "memtop: FILE:LINE: assertion failed: EXPR\n" on fd 2, then abort. */
static __attribute__((noreturn, cold, unused)) void mt_assert_fail(const char *file, unsigned line,
                                                                   const char *expr)
{
    char num[12];
    char *p = num + sizeof num;
    *--p = '\0';
    do
        *--p = (char)('0' + line % 10);
    while ((line /= 10) != 0);
    mt_assert_put("memtop: ");
    mt_assert_put(file);
    mt_assert_put(":");
    mt_assert_put(p);
    mt_assert_put(": assertion failed: ");
    mt_assert_put(expr);
    mt_assert_put("\n");
    abort();
}

#ifdef NDEBUG
#define MT_ASSERT(cond) ((void)sizeof(!(cond)))
#else
#define MT_ASSERT(cond)                                                                            \
    (__builtin_expect(!!(cond), 1) ? (void)0 : mt_assert_fail(__FILE__, __LINE__, #cond))
#endif

#endif
