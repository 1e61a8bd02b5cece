/* dl_hooks.c -- keep the module map complete across dlclose.
 *
 * The publisher records modules once per interval.  A library loaded,
 * used for allocations and unloaded between two publishes would leave
 * addresses no module explains, so dlclose records the module map before
 * the library goes away.  (Modules are never removed from the segment:
 * they are only marked unloaded.)
 */
#define _GNU_SOURCE
#include "mt_common.h"
#include "publisher.h"
#include "state.h"
#include "thread_state.h"

#include <dlfcn.h>

MT_EXPORT int dlclose(void *handle)
{
    static int (*real_dlclose)(void *);
    if (!real_dlclose)
        real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    if (!mt_tls_in_hook && atomic_load_explicit(&mt_g.state, memory_order_acquire) == MT_ST_READY) {
        mt_tls_in_hook = MT_IN_OWN;
        mt_publisher_sync_modules();
        mt_tls_in_hook = 0;
    }
    return real_dlclose ? real_dlclose(handle) : -1;
}
