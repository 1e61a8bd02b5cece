/* alloc_scan.h -- find every allocator in the process and say which ones
 * memtop sees (docs/allocators.md). */
#ifndef MT_ALLOC_SCAN_H
#define MT_ALLOC_SCAN_H

#include "shm_layout.h"

#include <stdbool.h>

/* Scans the modules loaded since the last scan (all of them the first
 * time): their symbol tables are read for allocator entry points, each
 * allocator found is classified (and hooked where memtop can: a
 * redirected entry point may stop the other threads for a moment,
 * alloc_stop.h), and one warning is logged for each that memtop cannot
 * see.  Called at tracking start and after every dlopen, with the thread
 * marked inside memtop; never inside dl_iterate_phdr.  busy_ok: if another
 * thread holds the scan's lock for more than 100 ms, return without
 * scanning (dlsym, dlclose: they do not wait longer, nor at all inside
 * dl_iterate_phdr); an allocator hooked late after such a give-up is
 * NOT exact, saying so.  No scan holds its lock while it waits for the
 * loader's, so a dlsym after its dlopen returned always waits for a scan
 * that has the new library. */
void mt_alloc_scan(bool busy_ok);

/* Copies what was found into the segment header (publisher thread). */
void mt_alloc_publish(mt_shm_header *h);

/* What was found, its names and flags (not the figures), into *out, for
 * a recording's ALLOCATORS record (record_records.c); false when a scan or
 * a publish holds the list (the caller tries again later).  Any thread. */
bool mt_alloc_found_copy(mt_shm_allocators *out);

/* How many allocators memtop cannot see were found (for recordings:
 * TOTALS, docs/recording-format.md).  A relaxed read: any thread. */
uint32_t mt_alloc_inexact_count(void);

/* Around a program's dlclose.  Begin: no scan takes a reference with
 * dlopen(RTLD_NOLOAD) (alloc_scan.c take_ref) until end, and it waits up
 * to 100 ms (not at all inside dl_iterate_phdr) while scans hold
 * references they took before, so that the program's dlclose, not a
 * scan's, is the last of a library memtop did not pin: its destructors
 * then run on the program's thread, not on a scan's, where memtop does
 * not see their frees.  An add and a load when none is held. */
void mt_alloc_close_begin(void);
void mt_alloc_close_end(void);

/* In a fork child: a scan that another thread of the parent was running
 * is forgotten (its lock is released). */
void mt_alloc_fork_child(void);

#endif
