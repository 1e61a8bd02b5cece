/* hook_dl.c -- the loader functions memtop interposes on.
 *
 * dlclose: the publisher records modules once per interval, and a
 * recording's writer once per pass.  A library loaded, used for
 * allocations and unloaded between two of them would leave addresses no
 * module explains, so dlclose records the module map, in the segment and
 * in the recording (record_thread.c mt_rec_dlclose_modules), before the
 * library goes away, and the allocator scan (alloc_scan.c)
 * looks at it before it goes.  (Modules are never removed from the
 * segment: they are only marked unloaded.)  After the real dlclose, the
 * unwinders' rule caches are flushed (mt_backtrace_flush): the unloaded
 * object's addresses may be reused by the next object loaded.  What is
 * left is a tiny window: between the unmapping inside the real dlclose and
 * the flush, another thread could load a library at the same addresses and
 * allocate from its code (its constructors run inside its dlopen), and
 * then be walked with the old object's rules: a wrong trace, or, if a
 * walk's checks catch it, a fallback to libunwind.
 * After the real dlclose, the module map is listed again, in the segment
 * and in the recording: an object it unloaded is marked gone at once,
 * stamped with the next trace id (publish_modules.c), so that a viewer
 * names a trace taken before it from it, and not from a library loaded at
 * its place later (which the next listing, up to an interval later, would
 * have found already there).  First, the traces into the modules it
 * unloaded are retired (hook_dl_gone.c, from a listing of its own before
 * and after the real dlclose): a backtrace taken later in a library
 * loaded at their place gets a new id, beyond the stamp, not theirs.
 *
 * dlsym (x86-64): a program gets the functions of a library it loaded
 * with dlopen through dlsym.  Before answering, memtop scans for modules
 * loaded since its last scan (alloc_scan.c), so that an allocator in the
 * new library is redirected (alloc_patch.c, with the other threads
 * stopped) before the program holds a pointer into it, instead of up to
 * one publisher poll later.  dlsym(RTLD_NEXT, ...) depends on its caller,
 * which glibc takes from the return address: the wrapper is a few
 * instructions of assembly that call the scan and then jump (not call) to
 * the real dlsym, so that it sees the program's return address.  (dlopen
 * cannot be wrapped that way: the scan must come after it.)
 *
 * dl_iterate_phdr: its callbacks run with the loader's lock held, and
 * libunwind calls dl_iterate_phdr while it holds its own lock.  A hook that
 * unwound inside a callback would take the two in the opposite order: one
 * thread there and another unwinding would wait for each other for ever
 * (libunwind blocks signals meanwhile: only SIGKILL ends the process).  So
 * the interposer only counts, per thread, how deep inside dl_iterate_phdr
 * it is (mt_tls_dl_depth); the hooks do not unwind while it is non-zero.
 * libunwind's own calls come through here too, from inside a hook: the
 * interposer must do nothing else, and never allocate.
 */
#define _GNU_SOURCE
#include "alloc_scan.h"
#include "hook_dl_gone.h"
#include "unwind_backtrace.h"
#include "core_common.h"
#include "core_nocancel.h"
#include "publish_thread.h"
#include "record.h"
#include "core_state.h"
#include "core_thread_state.h"
#include "hook_next.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>

static _Atomic(void *) g_real_dlclose;

MT_EXPORT int dlclose(void *handle)
{
    int (*real_dlclose)(void *) = (int (*)(void *))mt_next_fn(&g_real_dlclose, "dlclose");
    bool closing = false;
    mt_dl_listing before;
    if (!mt_tls_in_hook && atomic_load_explicit(&mt_g.state, memory_order_acquire) == MT_ST_READY) {
        /* the scan, the modules' names (/proc/self/maps): core_nocancel.h */
        int cancel = mt_nocancel_begin();
        (void)mt_in_hook_set(MT_IN_OWN);
        mt_alloc_scan(true);    /* a library loaded since the publisher's last poll */
        mt_alloc_close_begin(); /* a scan's dlclose is not the last */
        closing = true;
        mt_dl_list(&before); /* what the real dlclose may unload */
        mt_publisher_sync_modules();
        mt_rec_dlclose_modules(false); /* the recording's module map, likewise */
        mt_in_hook_restore(0);
        mt_nocancel_end(cancel);
    }
    int rc = real_dlclose ? real_dlclose(handle) : -1;
    if (closing)
        mt_alloc_close_end();
    mt_backtrace_flush();
    if (closing) {
        int saved = errno, cancel = mt_nocancel_begin();
        (void)mt_in_hook_set(MT_IN_OWN);
        mt_dl_retire_gone(&before);   /* before the stamp: see the top */
        mt_publisher_sync_modules();  /* the unloads, stamped now (see the top) */
        mt_rec_dlclose_modules(true); /* the recording's, likewise */
        mt_in_hook_restore(0);
        mt_nocancel_end(cancel);
        errno = saved;
    }
    return rc;
}

#if defined(__x86_64__)
/* The real dlsym (libc's), found with dlvsym, which is not interposed. */
MT_HIDDEN _Atomic(void *) mt_dlsym_next; /* read by the assembly below: a plain load */

MT_HIDDEN void mt_dlsym_pre(void);
void mt_dlsym_pre(void)
{
    if (MT_UNLIKELY(!atomic_load_explicit(&mt_dlsym_next, memory_order_acquire))) {
        void *f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        atomic_store_explicit(&mt_dlsym_next, f, memory_order_release);
    }
    if (mt_tls_in_hook || atomic_load_explicit(&mt_g.state, memory_order_acquire) != MT_ST_READY)
        return; /* memtop's own lookups, or before tracking */
    (void)mt_in_hook_set(MT_IN_OWN);
    mt_alloc_scan(true); /* an allocator in a library loaded since the last scan */
    mt_in_hook_restore(0);
}

/* dlsym: the scan, then a jump to the real one with the caller's return
 * address still on the stack (the arguments kept across the call; the
 * stack aligned to 16 bytes for it). */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    endbr64\n"
        "    push %rdi\n"
        "    push %rsi\n"
        "    sub $8, %rsp\n"
        "    call mt_dlsym_pre\n"
        "    add $8, %rsp\n"
        "    pop %rsi\n"
        "    pop %rdi\n"
        "    jmp *mt_dlsym_next(%rip)\n"
        ".size dlsym, .-dlsym\n");
#endif

typedef int (*dl_iter_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iter_fn)(dl_iter_cb, void *);
/* The next dl_iterate_phdr (libc's).  The first call always comes before
 * the first unwind (mt_backtrace_init calls dl_iterate_phdr before it
 * binds libunwind), so its lookup never runs inside libunwind with its
 * lock held. */
static _Atomic(void *) g_real_iterate;

MT_EXPORT int dl_iterate_phdr(dl_iter_cb callback, void *data)
{
    dl_iter_fn real = (dl_iter_fn)mt_next_fn(&g_real_iterate, "dl_iterate_phdr");
    if (MT_UNLIKELY(!real))
        return 0; /* no libc below us: nothing to iterate */
    mt_tls_dl_depth++;
    int rc = real(callback, data);
    mt_tls_dl_depth--;
    return rc;
}
