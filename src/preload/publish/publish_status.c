/* publish_status.c -- the record a viewer reads when this process has no
 * segment (see src/ipc/preload_status.h).
 *
 * `memtop_status` is static data (.data, not .bss: its magic is there from
 * the moment the library is mapped) and exported, so that a debugger can
 * print it too.  Written only when creating the segment fails, by the
 * thread creating it under the publish lock, and cleared in a fork child;
 * a viewer reads it from another process, through /proc/<pid>/mem, at any
 * moment: the fields first, the phase last with a release store, and the
 * reader reads the record until two reads agree (preload_probe.c). */
#include "publish_status.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) mt_status_record memtop_status = {
    .magic = MT_STATUS_MAGIC,
    .version = MT_STATUS_VERSION,
    .bytes = sizeof(mt_status_record),
};

void mt_status_fail(mt_status_phase phase, int err, const char *path)
{
    mt_status_record *r = &memtop_status;
    __atomic_store_n(&r->phase, MT_STATUS_NONE, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* NONE is seen before any field changes */
    r->err = err;
    r->pid = (int32_t)getpid();
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    __atomic_store_n(&r->phase, (uint32_t)phase, __ATOMIC_RELEASE);
}

void mt_status_clear(void)
{
    /* Mostly clear already: a fork child that does not write the page
     * does not copy it. */
    if (__atomic_load_n(&memtop_status.phase, __ATOMIC_RELAXED) != MT_STATUS_NONE)
        __atomic_store_n(&memtop_status.phase, MT_STATUS_NONE, __ATOMIC_RELEASE);
}
