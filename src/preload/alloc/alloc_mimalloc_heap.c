/* alloc_mimalloc_heap.c -- the rest of mimalloc's allocating API: its
 * mi_heap_* functions (first-class heaps), the aligned-at, zeroing and
 * string variants, and mi_heap_destroy, which frees every block of a heap
 * at once.
 *
 * Hooked like alloc_mimalloc.c's malloc family: interposed by name where
 * libmimalloc exports them, and redirected in memory by the first scan
 * (alloc_scan.c), so that direct calls and libmimalloc's own calls between
 * them (mi_strdup jumps to mi_heap_strdup) are seen; a call made inside
 * memtop passes through, so each block counts once, at the program's call.
 * Every function here that allocates reaches mimalloc's internals directly
 * (mi_heap_strdup does not call mi_heap_malloc), so each must be hooked
 * itself.  Not hooked: mi_wcsdup, mi_dupenv_s and mi_reallocarr, which
 * allocate through mi_malloc, mi_strdup and mi_reallocarray by their
 * PLT: counted, but charged to the libmimalloc function that called.
 *
 * mi_heap_destroy frees a heap's blocks without a free call each: memtop's
 * definition visits them first (mi_heap_visit_blocks) and takes each out
 * of the block table, as a free would, and the heap's own record, which
 * mi_heap_new allocated from the backing heap (seen: counted at
 * mi_heap_new's call to mi_heap_malloc_small) and which mimalloc frees
 * inside mi_heap_destroy (with the thread inside memtop: unseen).  A block memtop did not see (made
 * before memtop hooked mimalloc, or an over-aligned block whose pointer
 * lies inside the block mimalloc reports) counts as an unknown free, which
 * says NOT exact.
 */
#define _GNU_SOURCE
#include "alloc_mimalloc.h"
#include "alloc_mimalloc_hook.h"

#include <stdbool.h>
#include <string.h>

#define MI_SLOT(name)                                                                              \
    static _Atomic(void *) slot_##name;                                                            \
    static _Atomic unsigned long long miss_##name;
MT_MI_HEAP_FUNCS(MI_SLOT)
static _Atomic(void *) slot_mi_heap_visit_blocks, slot_mi_heap_get_backing;
static _Atomic unsigned long long miss_mi_heap_visit_blocks, miss_mi_heap_get_backing;

typedef void mi_heap; /* mimalloc's mi_heap_t, only passed along */

static size_t str_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static size_t strn_size(const char *s, size_t n)
{
    return s ? strnlen(s, n) + 1 : 0;
}

MI_ALLOC(mi_heap_malloc, (mi_heap * h, size_t n), (h, n), n)
MI_ALLOC(mi_heap_zalloc, (mi_heap * h, size_t n), (h, n), n)
MI_ALLOC(mi_heap_calloc, (mi_heap * h, size_t c, size_t n), (h, c, n), mt_mi_mul(c, n))
MI_ALLOC(mi_heap_mallocn, (mi_heap * h, size_t c, size_t n), (h, c, n), mt_mi_mul(c, n))
MI_ALLOC(mi_heap_malloc_small, (mi_heap * h, size_t n), (h, n), n)
MI_ALLOC(mi_heap_malloc_aligned, (mi_heap * h, size_t n, size_t a), (h, n, a), n)
MI_ALLOC(mi_heap_malloc_aligned_at, (mi_heap * h, size_t n, size_t a, size_t o), (h, n, a, o), n)
MI_ALLOC(mi_heap_zalloc_aligned, (mi_heap * h, size_t n, size_t a), (h, n, a), n)
MI_ALLOC(mi_heap_zalloc_aligned_at, (mi_heap * h, size_t n, size_t a, size_t o), (h, n, a, o), n)
MI_ALLOC(mi_heap_calloc_aligned, (mi_heap * h, size_t c, size_t n, size_t a), (h, c, n, a),
         mt_mi_mul(c, n))
MI_ALLOC(mi_heap_calloc_aligned_at, (mi_heap * h, size_t c, size_t n, size_t a, size_t o),
         (h, c, n, a, o), mt_mi_mul(c, n))
MI_ALLOC(mi_heap_alloc_new, (mi_heap * h, size_t n), (h, n), n)
MI_ALLOC(mi_heap_alloc_new_n, (mi_heap * h, size_t c, size_t n), (h, c, n), mt_mi_mul(c, n))
MI_ALLOC(mi_heap_strdup, (mi_heap * h, const char *s), (h, s), str_size(s))
MI_ALLOC(mi_heap_strndup, (mi_heap * h, const char *s, size_t n), (h, s, n), strn_size(s, n))
MI_ALLOC(mi_malloc_small, (size_t n), (n), n)
MI_ALLOC(mi_zalloc_small, (size_t n), (n), n)
MI_ALLOC(mi_malloc_aligned_at, (size_t n, size_t a, size_t o), (n, a, o), n)
MI_ALLOC(mi_zalloc_aligned_at, (size_t n, size_t a, size_t o), (n, a, o), n)
MI_ALLOC(mi_calloc_aligned_at, (size_t c, size_t n, size_t a, size_t o), (c, n, a, o),
         mt_mi_mul(c, n))
MI_ALLOC(mi_strdup, (const char *s), (s), str_size(s))
MI_ALLOC(mi_strndup, (const char *s, size_t n), (s, n), strn_size(s, n))
MI_ALLOC(mi_memalign, (size_t a, size_t n), (a, n), n)
MI_ALLOC(mi_valloc, (size_t n), (n), n)
MI_ALLOC(mi_pvalloc, (size_t n), (n), n)
MI_ALLOC(mi_aligned_alloc, (size_t a, size_t n), (a, n), n)

MI_REALLOC(mi_heap_realloc, (mi_heap * h, void *p, size_t n), (h, p, n), n, false)
MI_REALLOC(mi_heap_reallocn, (mi_heap * h, void *p, size_t c, size_t n), (h, p, c, n),
           mt_mi_mul(c, n), false)
MI_REALLOC(mi_heap_reallocf, (mi_heap * h, void *p, size_t n), (h, p, n), n, true)
MI_REALLOC(mi_heap_realloc_aligned, (mi_heap * h, void *p, size_t n, size_t a), (h, p, n, a), n,
           false)
MI_REALLOC(mi_heap_realloc_aligned_at, (mi_heap * h, void *p, size_t n, size_t a, size_t o),
           (h, p, n, a, o), n, false)
MI_REALLOC(mi_heap_rezalloc, (mi_heap * h, void *p, size_t n), (h, p, n), n, false)
MI_REALLOC(mi_heap_recalloc, (mi_heap * h, void *p, size_t c, size_t n), (h, p, c, n),
           mt_mi_mul(c, n), false)
MI_REALLOC(mi_heap_rezalloc_aligned, (mi_heap * h, void *p, size_t n, size_t a), (h, p, n, a), n,
           false)
MI_REALLOC(mi_heap_rezalloc_aligned_at, (mi_heap * h, void *p, size_t n, size_t a, size_t o),
           (h, p, n, a, o), n, false)
MI_REALLOC(mi_heap_recalloc_aligned, (mi_heap * h, void *p, size_t c, size_t n, size_t a),
           (h, p, c, n, a), mt_mi_mul(c, n), false)
MI_REALLOC(mi_heap_recalloc_aligned_at,
           (mi_heap * h, void *p, size_t c, size_t n, size_t a, size_t o), (h, p, c, n, a, o),
           mt_mi_mul(c, n), false)
MI_REALLOC(mi_realloc_aligned_at, (void *p, size_t n, size_t a, size_t o), (p, n, a, o), n, false)
MI_REALLOC(mi_rezalloc, (void *p, size_t n), (p, n), n, false)
MI_REALLOC(mi_recalloc, (void *p, size_t c, size_t n), (p, c, n), mt_mi_mul(c, n), false)
MI_REALLOC(mi_rezalloc_aligned, (void *p, size_t n, size_t a), (p, n, a), n, false)
MI_REALLOC(mi_rezalloc_aligned_at, (void *p, size_t n, size_t a, size_t o), (p, n, a, o), n, false)
MI_REALLOC(mi_recalloc_aligned, (void *p, size_t c, size_t n, size_t a), (p, c, n, a),
           mt_mi_mul(c, n), false)
MI_REALLOC(mi_recalloc_aligned_at, (void *p, size_t c, size_t n, size_t a, size_t o),
           (p, c, n, a, o), mt_mi_mul(c, n), false)
MI_REALLOC(mi_reallocarray, (void *p, size_t c, size_t n), (p, c, n), mt_mi_mul(c, n), false)
MI_REALLOC(mi_new_realloc, (void *p, size_t n), (p, n), n, false)
MI_REALLOC(mi_new_reallocn, (void *p, size_t c, size_t n), (p, c, n), mt_mi_mul(c, n), false)

/* mi_expand resizes in place or fails (NULL, only when growing: the block
 * stays as it was), as realloc_done takes it.  A program's call that finds
 * the thread inside memtop (hook_nested.h) is accounted after the call,
 * when it succeeded (mt_nested_resized: the old record's free, the block
 * untracked; it once kept its record and the size it had); a failed one
 * changes nothing.  A realloc's rule would account the old block's free
 * before the call, which fails as often as not: the block live, its
 * record gone, its later free an unknown one. */
MT_EXPORT void *mi_expand(void *p, size_t n)
{
    void *(*real)(void *, size_t) =
        (void *(*)(void *, size_t))mt_next_fn_loaded(&slot_mi_expand, &miss_mi_expand, "mi_expand");
    if (MT_UNLIKELY(!real))
        return NULL;
    int in = mt_tls_in_hook;
    if (in) {
        void *q;
        if (mt_nested_entry_is_program(in, __builtin_return_address(0))) {
            MT_REAL_CALL(q = real(p, n));
            if (q)
                mt_nested_resized(p, in);
        } else {
            q = real(p, n);
        }
        return q;
    }
    HOOK_REALLOC_RETURN(p, real(p, n), n, false, NULL);
}

/* realpath allocates only when not given a buffer: the result's length. */
#define MI_REALPATH(name, params, args)                                                            \
    MT_EXPORT char *name params                                                                    \
    {                                                                                              \
        char *(*real)params =                                                                      \
            (char *(*)params)mt_next_fn_loaded(&slot_##name, &miss_##name, #name);                 \
        if (MT_UNLIKELY(!real))                                                                    \
            return NULL;                                                                           \
        if (resolved)                                                                              \
            return real args;                                                                      \
        if (mt_tls_in_hook) /* inside memtop: hook_nested.h */                                     \
            return hook_nested_alloc(real args);                                                   \
        mt_thread *t = hook_enter();                                                               \
        if (!t)                                                                                    \
            return real args;                                                                      \
        char *r;                                                                                   \
        HOOK_REAL(r = real args);                                                                  \
        return alloc_done(t, r, str_size(r), HOOK_FRAME());                                        \
    }
MI_REALPATH(mi_heap_realpath, (mi_heap * h, const char *f, char *resolved), (h, f, resolved))
MI_REALPATH(mi_realpath, (const char *f, char *resolved), (f, resolved))

MT_EXPORT int mi_posix_memalign(void **out, size_t a, size_t n)
{
    int (*real)(void **, size_t, size_t) = (int (*)(void **, size_t, size_t))mt_next_fn_loaded(
        &slot_mi_posix_memalign, &miss_mi_posix_memalign, "mi_posix_memalign");
    if (MT_UNLIKELY(!real))
        return ENOMEM;
    int in = mt_tls_in_hook, rc;
    if (in) { /* inside memtop: hook_nested_alloc's rule */
        if (!mt_nested_entry_is_program(in, __builtin_return_address(0)))
            return real(out, a, n);
        MT_REAL_CALL(rc = real(out, a, n));
        count_untracked(rc == 0 ? *out : NULL);
        return rc;
    }
    mt_thread *t = hook_enter();
    if (!t)
        return real(out, a, n);
    HOOK_REAL(rc = real(out, a, n));
    alloc_done(t, rc == 0 ? *out : NULL, n, HOOK_FRAME());
    return rc;
}

/* ---- mi_heap_destroy ---- */

typedef bool (*mi_visit_fn)(const mi_heap *h, const void *area, void *block, size_t size,
                            void *arg);

/* A block of the heap being destroyed: taken out like a free. */
static bool drop_block(const mi_heap *h, const void *area, void *block, size_t size, void *arg)
{
    (void)h;
    (void)area;
    (void)size;
    if (block)
        mt_on_free((mt_thread *)arg, block);
    return true;
}

/* The same for a program's call inside memtop (hook_nested.h); arg: the
 * thread's in_hook, by address. */
static bool drop_block_nested(const mi_heap *h, const void *area, void *block, size_t size,
                              void *arg)
{
    (void)h;
    (void)area;
    (void)size;
    mt_nested_gone(block, *(const int *)arg, true);
    return true;
}

/* Visits h's blocks with fn unless h is the thread's backing heap (whose
 * blocks stay live: see below); false when it is, or the helpers are
 * not known. */
static bool visit_dropped(mi_heap *h, mi_visit_fn fn, void *arg)
{
    bool (*visit)(const mi_heap *, bool, mi_visit_fn, void *) =
        (bool (*)(const mi_heap *, bool, mi_visit_fn, void *))mt_next_fn_loaded(
            &slot_mi_heap_visit_blocks, &miss_mi_heap_visit_blocks, "mi_heap_visit_blocks");
    mi_heap *(*backing)(void) = (mi_heap * (*)(void)) mt_next_fn_loaded(
        &slot_mi_heap_get_backing, &miss_mi_heap_get_backing, "mi_heap_get_backing");
    if (!visit || !backing || h == backing())
        return false;
    visit(h, true, fn, arg);
    return true;
}

/* mi_heap_destroy called by the program inside memtop (a signal handler):
 * each block accounted with try-locks (mt_nested_gone) before the real
 * call frees them all; they once kept their records, counted nowhere. */
static void heap_destroy_nested(void (*real)(mi_heap *), mi_heap *h, int in)
{
    int saved = errno;
    bool dropped;
    MT_REAL_CALL(dropped = visit_dropped(h, drop_block_nested, &in));
    if (dropped)
        mt_nested_gone(h, in, true); /* the heap's own record, as below */
    MT_REAL_CALL(real(h));
    errno = saved;
}

/* mimalloc destroys a heap made by mi_heap_new (whose blocks go with
 * it); a thread's backing heap it only deletes (its blocks move to the
 * backing heap and stay live), as mimalloc 2.0 does for any heap that may
 * hold reclaimed pages, which only backing heaps do. */
MT_EXPORT void mi_heap_destroy(mi_heap *h)
{
    void (*real)(mi_heap *) = (void (*)(mi_heap *))mt_next_fn_loaded(
        &slot_mi_heap_destroy, &miss_mi_heap_destroy, "mi_heap_destroy");
    if (MT_UNLIKELY(!real))
        return;
    int in = mt_tls_in_hook;
    if (h && in && mt_nested_entry_is_program(in, __builtin_return_address(0))) {
        heap_destroy_nested(real, h, in);
        return;
    }
    mt_thread *t = h ? hook_enter() : NULL;
    if (!t) {
        real(h);
        return;
    }
    int saved = errno;
    if (visit_dropped(h, drop_block, t))
        mt_on_free(t, h); /* the heap's own record (from mi_heap_new), freed inside: unseen */
    HOOK_REAL(real(h));
    hook_leave(t);
    errno = saved;
}

void mt_mi_heap_helpers(void *visit, void *backing)
{
    if (visit)
        atomic_store_explicit(&slot_mi_heap_visit_blocks, visit, memory_order_release);
    if (backing)
        atomic_store_explicit(&slot_mi_heap_get_backing, backing, memory_order_release);
}

#define MI_ENTRY(name) {#name, (void *)name, &slot_##name},
const mt_patch_entry mt_mi_heap_entries[MT_MI_HEAP_N] = {MT_MI_HEAP_FUNCS(MI_ENTRY)};
