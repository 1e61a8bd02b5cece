/* pf_own_unwind_lib.c -- pitfall 8b: a library that brings its own
 * unwinder entry points with the names libunwind and libgcc export:
 * unw_backtrace (unprefixed in Debian's libunwind.so.8, so a clash),
 * _Unwind_Backtrace and LLVM-style unw_getcontext/unw_init_local/unw_step.
 * They return sentinel values and count every call, so the program can
 * tell whether anyone else (libmemtop.so's unwinder) was bound to them.
 */
#include <stdint.h>

static long g_calls;

long own_unwind_calls(void)
{
    return __atomic_load_n(&g_calls, __ATOMIC_RELAXED);
}

static void count(void)
{
    __atomic_fetch_add(&g_calls, 1, __ATOMIC_RELAXED);
}

int unw_backtrace(void **buf, int size)
{
    count();
    int n = size < 3 ? size : 3;
    for (int i = 0; i < n; i++)
        buf[i] = (void *)(uintptr_t)(0x5eed0000u + (unsigned)i);
    return n;
}

int _Unwind_Backtrace(void *fn, void *arg)
{
    (void)fn, (void)arg;
    count();
    return 5; /* _URC_END_OF_STACK, without calling fn */
}

int unw_getcontext(void *ctx)
{
    (void)ctx;
    count();
    return 0;
}

int unw_init_local(void *cursor, void *ctx)
{
    (void)cursor, (void)ctx;
    count();
    return 0;
}

int unw_step(void *cursor)
{
    (void)cursor;
    count();
    return 0;
}
