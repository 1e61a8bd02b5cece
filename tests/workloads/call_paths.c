/* call_paths.c -- memtop-call-paths: allocations along known call paths,
 * for the call tree tests (tests/e2e/check_call_tree.py checks the tree to
 * the byte, top-down and bottom-up):
 *   main -> net_serve -> shared_helper      3 blocks of 1000 B
 *   main -> db_query  -> shared_helper      5 blocks of  700 B
 *   main -> recurse -> recurse -> recurse   2 blocks of  333 B (direct recursion)
 *   main -> ping -> pong -> ping            1 block  of 4242 B (indirect recursion)
 *   main -> inline_user -> fill_buf         4 blocks of  111 B (fill_buf inlined)
 * Nothing is freed; the program exits, and memtop exports at its exit.
 * Built -O1 -g: every function but fill_buf is noipa (a real frame that is
 * neither inlined, cloned nor folded), fill_buf is always inlined. */
#include <stdlib.h>
#include <string.h>

#define NOIPA __attribute__((noipa))

static void *volatile keep[32];
static unsigned nkeep;

NOIPA static void shared_helper(size_t size, unsigned blocks)
{
    for (unsigned i = 0; i < blocks; i++)
        keep[nkeep++] = malloc(size);
}

NOIPA static void net_serve(void)
{
    shared_helper(1000, 3);
}

NOIPA static void db_query(void)
{
    shared_helper(700, 5);
}

NOIPA static void recurse(int depth)
{
    if (depth > 0) {
        recurse(depth - 1);
        return;
    }
    keep[nkeep++] = malloc(333);
    keep[nkeep++] = malloc(333);
}

NOIPA static void ping(int n);

NOIPA static void pong(int n)
{
    ping(n - 1);
}

NOIPA static void ping(int n)
{
    if (n > 0)
        pong(n);
    else
        keep[nkeep++] = malloc(4242);
}

static inline __attribute__((always_inline)) void fill_buf(void)
{
    char *p = malloc(111);
    if (p)
        memset(p, 1, 111);
    keep[nkeep++] = p;
}

NOIPA static void inline_user(void)
{
    for (int i = 0; i < 4; i++)
        fill_buf();
}

int main(void)
{
    net_serve();
    db_query();
    recurse(2);
    ping(1);
    inline_user();
    return 0;
}
