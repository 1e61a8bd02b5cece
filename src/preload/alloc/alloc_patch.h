/* alloc_patch.h -- redirecting a function's entry point in memory (x86-64),
 * for allocator entry points that calls reach without the PLT
 * (docs/allocators.md, "Redirecting entry points"). */
#ifndef MT_CODE_PATCH_H
#define MT_CODE_PATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One function to redirect: its entry (addr, its symbol's size), where
 * calls must go instead (hook), and where the original is to be found
 * afterwards (*orig: a trampoline that runs the displaced instructions and
 * jumps back into the function). */
typedef struct mt_patch {
    uint64_t addr, size;
    void *hook;
    _Atomic(void *) *orig; /* where the hook finds the original (release) */
    bool done;             /* out: redirected */
    char why[96];          /* out: why not, when !done */
} mt_patch;

/* Redirects each of the n functions that can be, all or nothing per
 * function: a function is refused (done false, why says it) when it is
 * shorter than the jump, when a displaced instruction cannot be moved,
 * when a branch in its body targets the displaced bytes, or when no page
 * for its trampoline is within +-2 GiB.  *orig is stored before the entry
 * is written.  Two functions at one address (aliases) are one entry:
 * the first one's hook gets the calls, both get its trampoline.  The
 * instructions are rewritten while nothing else can run them: when the
 * caller's is not the process's only thread, the others are stopped
 * meanwhile (alloc_stop.h); false, nothing patched, each why saying it,
 * when they cannot be.  whole: all or nothing for the set (false, nothing
 * patched, when any function is refused: the refused one says why, the
 * others "another entry cannot be redirected").  The functions must lie in
 * one module.  No allocation. */
bool mt_patch_all(mt_patch *p, size_t n, bool whole);

/* Loads the instruction decoder mt_patch_all needs (a dlopen: it waits
 * for the loader's lock), if it can; any thread, holding no memtop lock
 * (the allocator scan, before it takes its lock to patch).  Tried once:
 * after a failure neither this nor mt_patch_all dlopens it again.  x86-64. */
void mt_patch_load_decoder(void);

/* One entry point an allocator's hooks can take over (alloc_mimalloc.c,
 * alloc_tcmalloc.c each have a table of them): its name, memtop's hook,
 * and the slot where the hook finds the original (the trampoline). */
typedef struct mt_patch_entry {
    const char *name;
    void *hook;
    _Atomic(void *) *orig;
} mt_patch_entry;

/* The index of name in the table t of n entries; -1 if not there. */
int mt_patch_entry_index(const mt_patch_entry *t, int n, const char *name);

/* The patches for the entries of t (n of them) found in a module: addr[i]
 * and size[i] where entry i's function lies, 0 if not found.  Fills out
 * (room for n) and at (which entry each patch is for); returns how many. */
size_t mt_patch_entries(const mt_patch_entry *t, int n, const uint64_t *addr, const uint64_t *size,
                        mt_patch *out, int *at);

#endif
