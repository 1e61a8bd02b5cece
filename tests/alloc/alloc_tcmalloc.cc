// alloc_tcmalloc.cc -- a C++ program linked with libtcmalloc_minimal.a
// (gperftools), allocating with new/delete, for tests/alloc: memtop finds
// the statically linked tcmalloc, which it does not hook yet, and says NOT
// exact.  Leaks 1000 bytes from leak_new(); prints "ok"; exits 0.
#include <cstdio>

static char *volatile sink;

__attribute__((noinline)) static void leak_new()
{
    sink = new char[1000];
}

int main()
{
    for (int i = 0; i < 1000; i++)
        delete[] new char[100 + i % 50];
    leak_new();
    std::printf("ok\n");
    return 0;
}
