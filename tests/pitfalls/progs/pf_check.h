/* pf_check.h -- tiny assertion helpers shared by the pitfall programs.
 *
 * A failed check prints one line to stderr and exits with status 99, so a
 * driver can tell a detected violation from a crash (signal) or a hang.
 */
#ifndef PF_CHECK_H
#define PF_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PF_FAIL_STATUS 99

#define PF_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "CHECK FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            _exit(PF_FAIL_STATUS);                                                                 \
        }                                                                                          \
    } while (0)

/* Keeps the compiler from optimising a malloc/free pair away. */
static inline void *pf_escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

#endif
