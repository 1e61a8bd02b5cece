/* core_dlerror.h -- memtop's own dl* calls leave no error for the program.
 *
 * When a dlopen or dlsym fails, glibc keeps the error for the thread's next
 * dlerror or dl* call: a result object and its message, both from malloc.
 * A call of memtop's runs inside memtop, so those two blocks are not
 * tracked; the program's next dlsym frees them, and memtop would count two
 * frees of blocks it never saw (alloc_mi_local, under load, when a scan's
 * RTLD_NOLOAD dlopen found a library not yet loaded).  Two dlerror calls,
 * still inside memtop, format the message and then free it all.  After a
 * call that succeeded there is nothing left and dlerror returns NULL.
 */
#ifndef MT_CORE_DLERROR_H
#define MT_CORE_DLERROR_H

#include <dlfcn.h>

static inline void mt_dl_forget_error(void)
{
    (void)dlerror(); /* the message, formatted: the error is now "returned" */
    (void)dlerror(); /* frees a returned error's message and result object */
}

#endif
