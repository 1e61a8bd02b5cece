/* plumbing.h -- allocator plumbing: functions that allocate on behalf of
 * their caller (malloc wrappers, operator new, std::vector and RawVec
 * growth, Rust's alloc crate, ...).  The location shown for a trace is its
 * first frame that is not plumbing, i.e. the program's own code.
 *
 * An entry matches a function whose name, without a C++ return type and
 * without leading '<', '&', "mut ", "*const ", "*mut ", "dyn " (Rust's
 * "<&mut Type as Trait>::f"; the Trait too when Type is no path),
 * starts with the entry
 * at a name boundary: "std::vector" matches
 * "std::vector<int>::_M_realloc_insert", "malloc" does not match
 * "malloc_stats"; an entry ending in '*' matches any continuation
 * ("g_malloc*"), and one ending in "::" matches everything in that scope.
 * Users add entries with MEMTOP_SKIP_FUNCS (comma-separated); an entry
 * "!name" (same matching) is never plumbing, whatever the list or the
 * name rule say.
 *
 * The name rule (mt_plumbing_name_rule) recognises wrappers the list does
 * not name: split the function's last identifier into words (at '_', at
 * lower-to-upper case and letter/digit changes), lower-case.  It is an
 * allocator when a word ends with malloc, calloc, realloc, zalloc, alloc,
 * memalign, strdup, strndup or memdup and every word after it is a digit
 * string or a modifier (usable, num, n, zero, raw, try, internal, ...):
 * zmalloc, zrealloc_usable, zcalloc_num, sqlite3MallocZero, g_malloc0_n,
 * PyMem_RawMalloc, pool_alloc.  Or when it ends in "_new" after another
 * word (session_new: a constructor).  realloc_buffer_for_client,
 * allocate_session and malloc_stats are not. */
#ifndef MEMTOP_PLUMBING_H
#define MEMTOP_PLUMBING_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mt_plumbing {
    const char **entries;
    size_t count;
    size_t builtin; /* entries [0, builtin) are mt_plumbing_builtin's, the user's after */
    char *extra;    /* owned copy of the user's list, split in place */
} mt_plumbing;

/* The built-in list plus the comma-separated entries of extra (NULL: none).
 * false when out of memory. */
bool mt_plumbing_init(mt_plumbing *p, const char *extra);
void mt_plumbing_free(mt_plumbing *p);

bool mt_plumbing_match(const mt_plumbing *p, const char *function);
/* Does a user's "!name" entry keep function (never plumbing, whatever the
 * list, the name rule or the shape rule say)?  false for NULL. */
bool mt_plumbing_kept(const mt_plumbing *p, const char *function);
/* Is function a member of a standard class template that names a type of
 * the program among its template arguments ("std::hash<MyKey>::operator()",
 * "std::formatter<app::Point, char>::format"), which no entry of the
 * user's list names and the name rule does not take?  Such a member is
 * the program's specialisation when its code is in the program's source,
 * not in a library header: the caller decides that by the frame's file
 * (location.c); by name alone "std::map<MyKey, int>::operator[]" is the
 * same shape. */
bool mt_plumbing_std_specialisation(const mt_plumbing *p, const char *function);
/* The name rule alone (function: a qualified name, e.g. "ns::Pool::alloc"). */
bool mt_plumbing_name_rule(const char *function);

/* The built-in entries, NULL-terminated (for --help and tests). */
extern const char *const mt_plumbing_builtin[];

#endif
