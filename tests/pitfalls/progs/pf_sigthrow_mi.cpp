/* pf_sigthrow_mi.cpp -- a tiny "mimalloc" for pf_sigthrow.cpp (pf_sigthrow.py):
 * it exports mi_malloc, mi_free and mi_new, so memtop takes it for a shared
 * mimalloc whose API it hooks (alloc_mimalloc.c), and its mi_new throws
 * std::bad_alloc for a size it cannot give, as libmimalloc's does when a
 * new_handler throws.  pf_sigthrow_own calls mi_malloc by name: the
 * allocator reaching its own entry (as mi_wcsdup does), a call that
 * memtop tells from a signal handler's by where it returns and by the
 * thread's state (hook_nested.h).  Blocks come from a static arena with an
 * atomic bump (any thread, any signal handler); mi_free keeps them.  It
 * also resizes in place (mi_expand, within a block's size) and has heaps
 * (mi_heap_new, mi_heap_malloc, mi_heap_destroy and what memtop asks to
 * visit a heap's blocks). */
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace
{
alignas(16) char g_arena[1 << 20];
std::atomic<size_t> g_used{0};

/* n bytes, their size in the 16 bytes below them. */
void *bump(size_t n)
{
    size_t need = 16 + ((n + 15) & ~size_t{15});
    if (n > sizeof g_arena)
        return nullptr;
    size_t off = g_used.fetch_add(need, std::memory_order_relaxed);
    if (off + need > sizeof g_arena)
        return nullptr;
    *(size_t *)(g_arena + off) = n;
    return g_arena + off + 16;
}
} // namespace

extern "C" {
void *mi_malloc(size_t n)
{
    return bump(n);
}

void mi_free(void *p)
{
    (void)p;
}

size_t mi_usable_size(const void *p)
{
    return p ? *((const size_t *)p - 2) : 0;
}

void *mi_new(size_t n)
{
    void *p = bump(n);
    if (!p)
        throw std::bad_alloc();
    return p;
}

/* In place or not at all; a block's size is kept below it. */
void *mi_expand(void *p, size_t n)
{
    return p && n <= mi_usable_size(p) ? p : nullptr;
}

/* A heap: the blocks it gave (none freed one by one), destroyed at once. */
typedef struct pf_heap {
    void *block[8];
    size_t size[8];
    unsigned n;
} pf_heap;
typedef bool(pf_visit)(const pf_heap *, const void *, void *, size_t, void *);

pf_heap *mi_heap_new(void)
{
    /* its record from the allocator's own entry (as mimalloc's backing
     * heap gives it): the program's call, tracked */
    pf_heap *h = (pf_heap *)mi_malloc(sizeof(pf_heap));
    if (h)
        h->n = 0;
    return h;
}

void *mi_heap_malloc(pf_heap *h, size_t n)
{
    if (h->n == 8)
        return nullptr;
    void *p = bump(n);
    if (p) {
        h->block[h->n] = p;
        h->size[h->n++] = n;
    }
    return p;
}

pf_heap *mi_heap_get_backing(void)
{
    static pf_heap backing;
    return &backing;
}

bool mi_heap_visit_blocks(const pf_heap *h, bool blocks, pf_visit *fn, void *arg)
{
    if (!fn(h, h, nullptr, 0, arg))
        return false;
    for (unsigned i = 0; blocks && i < h->n; i++)
        if (!fn(h, h, h->block[i], h->size[i], arg))
            return false;
    return true;
}

void mi_heap_destroy(pf_heap *h)
{
    h->n = 0; /* its blocks and its record stay in the arena */
}

/* The allocator's own call of its entry, through its PLT. */
void *pf_sigthrow_own(size_t n)
{
    void *p = mi_malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory"); /* not a tail call: returns here */
    return p;
}
}
