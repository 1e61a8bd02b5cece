/* pf_llvm_unwind.c -- pitfall 8a: a program linked against LLVM's
 * libunwind (libunwind.so.1, package libunwind-14), next to the libunwind
 * that libmemtop.so uses (libunwind.so.8).  Both export _Unwind_* symbols.
 *
 * From several threads it unwinds with _Unwind_Backtrace (allocating 1607
 * bytes inside the callback) and with LLVM's unw_getcontext/unw_step, and
 * checks that both find the return addresses in its own nested functions.
 * It prints which library each entry point came from, so the driver's
 * output comparison catches a changed symbol binding under the preload.
 * LLVM's libunwind.h is not installed (libunwind-14-dev conflicts with
 * libunwind-dev), so its few declarations are written out here.
 */
#define _GNU_SOURCE
#include "pf_check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unwind.h>

/* LLVM libunwind API (x86-64 sizes are 21 and 33 words; be generous). */
typedef struct {
    _Alignas(16) uint64_t data[128];
} llvm_unw_context_t;
typedef struct {
    _Alignas(16) uint64_t data[128];
} llvm_unw_cursor_t;
int unw_getcontext(llvm_unw_context_t *);
int unw_init_local(llvm_unw_cursor_t *, llvm_unw_context_t *);
int unw_step(llvm_unw_cursor_t *);
int unw_get_reg(llvm_unw_cursor_t *, int, uint64_t *);
#define LLVM_UNW_REG_IP (-1)

enum { MAX_FRAMES = 64, THREADS = 4, REPEAT = 200 };

typedef struct trace {
    uintptr_t ip[MAX_FRAMES];
    int n;
} trace;

static _Unwind_Reason_Code on_frame(struct _Unwind_Context *ctx, void *arg)
{
    trace *t = arg;
    free(pf_escape(malloc(1607)));
    if (t->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    t->ip[t->n++] = _Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

static void unwind_gcc_api(trace *t)
{
    t->n = 0;
    _Unwind_Backtrace(on_frame, t);
}

static void unwind_llvm_api(trace *t)
{
    llvm_unw_context_t uc;
    llvm_unw_cursor_t cur;
    t->n = 0;
    PF_CHECK(unw_getcontext(&uc) == 0 && unw_init_local(&cur, &uc) == 0, "unw_init_local");
    do {
        uint64_t ip;
        PF_CHECK(unw_get_reg(&cur, LLVM_UNW_REG_IP, &ip) == 0, "unw_get_reg");
        t->ip[t->n++] = (uintptr_t)ip;
    } while (t->n < MAX_FRAMES && unw_step(&cur) > 0);
}

/* True if some ip of t falls just after the start of fn (a return address
 * inside it; these functions are tiny). */
static int has_frame_in(const trace *t, void *fn)
{
    for (int i = 0; i < t->n; i++)
        if (t->ip[i] > (uintptr_t)fn && t->ip[i] - (uintptr_t)fn < 256)
            return 1;
    return 0;
}

__attribute__((noinline)) static int level3(trace *t, int api)
{
    if (api)
        unwind_llvm_api(t);
    else
        unwind_gcc_api(t);
    __asm__ volatile("" ::: "memory");
    return t->n;
}

__attribute__((noinline)) static int level2(trace *t, int api)
{
    int n = level3(t, api);
    __asm__ volatile("" ::: "memory");
    return n + 1;
}

__attribute__((noinline)) static int level1(trace *t, int api)
{
    int n = level2(t, api);
    __asm__ volatile("" ::: "memory");
    return n + 1;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < REPEAT; i++) {
        for (int api = 0; api < 2; api++) {
            trace t;
            level1(&t, api);
            PF_CHECK(t.n >= 4, "api %d: only %d frames", api, t.n);
            PF_CHECK(has_frame_in(&t, (void *)level2) && has_frame_in(&t, (void *)level1),
                     "api %d: frames of level1/level2 missing", api);
        }
    }
    return NULL;
}

static const char *provider(void *fn)
{
    Dl_info info;
    if (!dladdr(fn, &info) || !info.dli_fname)
        return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        PF_CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0, "pthread_create");
    for (int i = 0; i < THREADS; i++)
        PF_CHECK(pthread_join(t[i], NULL) == 0, "join");
    printf("_Unwind_Backtrace from %s\n", provider((void *)_Unwind_Backtrace));
    printf("unw_step from %s\n", provider((void *)unw_step));
    printf("llvm unwind ok\n");
    return 0;
}
