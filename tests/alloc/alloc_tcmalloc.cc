// alloc_tcmalloc.cc -- a C++ program linked with libtcmalloc_minimal.a
// (gperftools), for tests/alloc: its malloc, free and operators are
// tcmalloc's, defined in the executable (they win over memtop's), so
// memtop sees them only by redirecting tcmalloc's entry points.  Leaks
// 1000 bytes from leak_new() (new[]), 700 from leak_malloc(), 300 from
// leak_calloc() (3 x 100), 2000 from leak_realloc() and 512 from
// leak_aligned() (posix_memalign); frees all main allocates (delete[],
// sized delete, free, realloc then free).  Prints "ok" if the blocks are
// tcmalloc's (the program keeps its allocator); exits 0.  With "throw":
// first a new[] of PTRDIFF_MAX bytes, which tcmalloc's operator throws
// bad_alloc for through memtop's hook, is caught.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "throw_once.h"
#include <gperftools/malloc_extension.h>

static void *volatile sink[5];

struct Node {
    char pad[48];
};

__attribute__((noinline)) static void leak_new()
{
    sink[0] = new char[1000];
}

__attribute__((noinline)) static void leak_malloc()
{
    sink[1] = std::malloc(700);
}

__attribute__((noinline)) static void leak_calloc()
{
    sink[2] = std::calloc(3, 100);
}

__attribute__((noinline)) static void leak_realloc()
{
    sink[3] = std::realloc(std::malloc(10), 2000);
}

__attribute__((noinline)) static void leak_aligned()
{
    void *p = nullptr;
    if (posix_memalign(&p, 64, 512) == 0)
        sink[4] = p;
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "throw") == 0)
        throw_once();
    for (int i = 0; i < 1000; i++) {
        delete[] new char[100 + i % 50];
        delete new Node;
        std::free(std::realloc(std::malloc(16), 64 + i));
    }
    leak_new();
    leak_malloc();
    leak_calloc();
    leak_realloc();
    leak_aligned();
    bool mine = true;
    for (void *p : sink)
        mine = mine && MallocExtension::instance()->GetOwnership(p) == MallocExtension::kOwned;
    std::printf(mine ? "ok\n" : "not tcmalloc's\n");
    return 0;
}
