/* plumbing.h -- allocator plumbing: functions that allocate on behalf of
 * their caller (malloc wrappers, operator new, std::vector and RawVec
 * growth, Rust's alloc crate, ...).  The location shown for a trace is its
 * first frame that is not plumbing, i.e. the program's own code.
 *
 * An entry matches a function whose name, without a C++ return type and
 * without leading '<' (Rust's "<Type as Trait>::f"; the Trait too when Type is no path),
 * starts with the entry
 * at a name boundary: "std::vector" matches
 * "std::vector<int>::_M_realloc_insert", "malloc" does not match
 * "malloc_stats"; an entry ending in '*' matches any continuation
 * ("g_malloc*"), and one ending in "::" matches everything in that scope.
 * Users add entries with MEMTOP_SKIP_FUNCS (comma-separated). */
#ifndef MEMTOP_PLUMBING_H
#define MEMTOP_PLUMBING_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mt_plumbing {
    const char **entries;
    size_t count;
    char *extra; /* owned copy of the user's list, split in place */
} mt_plumbing;

/* The built-in list plus the comma-separated entries of extra (NULL: none).
 * false when out of memory. */
bool mt_plumbing_init(mt_plumbing *p, const char *extra);
void mt_plumbing_free(mt_plumbing *p);

bool mt_plumbing_match(const mt_plumbing *p, const char *function);

/* The built-in entries, NULL-terminated (for --help and tests). */
extern const char *const mt_plumbing_builtin[];

#endif
