/* alloc_nopie.c -- a non-PIE program that takes malloc's address, as
 * Debian's python3.11 does: its PLT entry becomes malloc's canonical
 * address, so dlsym(RTLD_DEFAULT, "malloc") names the executable although
 * every call still reaches memtop's hook.  memtop must call the data
 * exact (tests/alloc/check_honesty.py) and count the leak: 1000 bytes from
 * leak_nopie() through the pointer.  Prints one line; exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *(*volatile alloc_fn)(size_t);

__attribute__((noinline)) void *leak_nopie(void)
{
    void *p = alloc_fn(1000);
    if (p)
        memset(p, 1, 1000);
    return p;
}

int main(void)
{
    alloc_fn = malloc; /* in code: a non-PIE link takes the PLT entry as its address */
    puts(leak_nopie() ? "nopie: x" : "nopie: no memory");
    return 0;
}
