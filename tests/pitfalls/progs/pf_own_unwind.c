/* pf_own_unwind.c -- pitfall 8b: a program linked with a library that
 * defines its own unw_backtrace/_Unwind_Backtrace/unw_step.
 *
 * Its own calls must reach its own definitions (sentinel results), and
 * nobody else may call them: under the preload, a non-zero "foreign calls"
 * count means libmemtop.so's unwinder was bound to the program's symbols
 * (and its backtraces are garbage).  It also allocates 50 blocks of 1609
 * bytes so the driver can check those traces' frames.
 */
#include "pf_check.h"

#include <stdint.h>

long own_unwind_calls(void);
int unw_backtrace(void **buf, int size);
int _Unwind_Backtrace(void *fn, void *arg);
int unw_getcontext(void *ctx);
int unw_init_local(void *cursor, void *ctx);
int unw_step(void *cursor);

int main(void)
{
    void *buf[8] = {0};
    PF_CHECK(unw_backtrace(buf, 8) == 3 && buf[0] == (void *)(uintptr_t)0x5eed0000u,
             "unw_backtrace is not ours");
    PF_CHECK(_Unwind_Backtrace(NULL, NULL) == 5, "_Unwind_Backtrace is not ours");
    PF_CHECK(unw_getcontext(buf) == 0 && unw_init_local(buf, buf) == 0 && unw_step(buf) == 0,
             "unw_* are not ours");
    long mine = 5;
    void *keep[50];
    for (int i = 0; i < 50; i++)
        keep[i] = malloc(1609);
    for (int i = 0; i < 50; i++)
        free(keep[i]);
    printf("foreign calls to own unwinder: %ld\n", own_unwind_calls() - mine);
    printf("own unwind ok\n");
    return 0;
}
