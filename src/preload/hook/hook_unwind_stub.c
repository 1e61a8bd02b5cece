/* hook_unwind_stub.c -- the two functions of libgcc_s that the hooks a C++
 * exception may unwind through need (hook_direct.h hook_guard: the files
 * built with -fexceptions refer to the personality routine and to
 * _Unwind_Resume), forwarded to libgcc_s at their first use.
 *
 * Linking them from libgcc_s would make every target load libgcc_s at
 * start, C programs included (about 37k instructions more for a preloaded
 * /bin/true under callgrind).  An exception can only reach these hooks
 * from C++ code, which loaded libgcc_s already (libstdc++ needs it): so
 * they look it up then (dlopen RTLD_NOLOAD), and libmemtop.so does not
 * depend on it.  Hidden, like every symbol of the library: the program's
 * own unwinding still binds to libgcc_s. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "core_dlerror.h"

/* unwind.h's types, opaque here: that header declares both functions with
 * default visibility, which these must not have (the program's own
 * unwinding would bind to them). */
typedef int (*personality_fn)(int version, int actions, uint64_t cls, void *e, void *ctx);
typedef void (*resume_fn)(void *e);
#define HIDDEN __attribute__((visibility("hidden")))

/* libgcc_s's definition of name (it is loaded while an exception is in
 * flight, unless the program carries its own unwinder: -static-libgcc),
 * or NULL. */
static void *libgcc_fn(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (f)
        return f;
    void *program_error = mt_dl_error_stash(); /* core_dlerror.h */
    void *h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
    f = h ? dlsym(h, name) : NULL;
    if (f)
        atomic_store_explicit(slot, f, memory_order_release);
    else
        mt_dl_forget_error();
    mt_dl_error_restore(program_error);
    return f;
}

#define URC_CONTINUE_UNWIND 8 /* unwind.h's _URC_CONTINUE_UNWIND */

HIDDEN int __gcc_personality_v0(int version, int actions, uint64_t cls, void *e, void *ctx);
HIDDEN int __gcc_personality_v0(int version, int actions, uint64_t cls, void *e, void *ctx)
{
    static _Atomic(void *) slot;
    personality_fn f = (personality_fn)libgcc_fn(&slot, "__gcc_personality_v0");
    /* No libgcc_s: the frame is passed as one without cleanups (the guard
     * does not run: the thread stays inside memtop, as before the guard);
     * then _Unwind_Resume is never reached either. */
    return f ? f(version, actions, cls, e, ctx) : URC_CONTINUE_UNWIND;
}

HIDDEN void _Unwind_Resume(void *e);
HIDDEN void _Unwind_Resume(void *e)
{
    static _Atomic(void *) slot;
    resume_fn f = (resume_fn)libgcc_fn(&slot, "_Unwind_Resume");
    if (f)
        f(e);
    abort(); /* _Unwind_Resume does not return */
}
