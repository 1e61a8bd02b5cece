/* pf_sigthrow_mi.cpp -- a tiny "mimalloc" for pf_sigthrow.cpp (pf_sigthrow.py):
 * it exports mi_malloc, mi_free and mi_new, so memtop takes it for a shared
 * mimalloc whose API it hooks (alloc_mimalloc.c), and its mi_new throws
 * std::bad_alloc for a size it cannot give, as libmimalloc's does when a
 * new_handler throws.  pf_sigthrow_own calls mi_malloc by name: the
 * allocator reaching its own entry (as mi_wcsdup does), a call that
 * memtop tells from a signal handler's by where it returns and by the
 * thread's state (hook_nested.h).  Blocks come from a static arena with an
 * atomic bump (any thread, any signal handler); mi_free keeps them. */
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace
{
alignas(16) char g_arena[1 << 20];
std::atomic<size_t> g_used{0};

void *bump(size_t n)
{
    size_t need = (n + 15) & ~size_t{15};
    if (n > sizeof g_arena)
        return nullptr;
    size_t off = g_used.fetch_add(need, std::memory_order_relaxed);
    return off + need <= sizeof g_arena ? g_arena + off : nullptr;
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

void *mi_new(size_t n)
{
    void *p = bump(n);
    if (!p)
        throw std::bad_alloc();
    return p;
}

/* The allocator's own call of its entry, through its PLT. */
void *pf_sigthrow_own(size_t n)
{
    void *p = mi_malloc(n);
    __asm__ volatile("" : : "g"(p) : "memory"); /* not a tail call: returns here */
    return p;
}
}
