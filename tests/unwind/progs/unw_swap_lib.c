/* unw_swap_lib.c -- built twice (libunw_swap_a.so, libunw_swap_b.so) with
 * different SWAP_PAD: the same code layout (so the return addresses of
 * their calls sit at the same offsets) but different stack frames, i.e.
 * different unwind rules at the same addresses.  Loaded one after the
 * other at the same address, they catch a rule cache that dlclose did not
 * flush: the second library would be walked with the first one's rules.
 */
#include <stddef.h>
#include <stdlib.h>

#if !defined(SWAP_PAD) || SWAP_PAD < 256 || SWAP_PAD > 2048
#error "SWAP_PAD: 256..2048 (sub $imm32, %rsp either way)"
#endif

static __attribute__((noinline)) void *inner(size_t n)
{
    volatile char pad[SWAP_PAD];
    pad[0] = (char)n;
    void *p = malloc(n);
    pad[SWAP_PAD - 1] = pad[0];
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static __attribute__((noinline)) void *middle(size_t n)
{
    volatile char pad[SWAP_PAD / 2];
    pad[0] = 1;
    void *p = inner(n + (size_t)pad[0] - 1);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

void *swap_alloc(size_t n)
{
    void *p = middle(n);
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}
