// alloc_je_cpp.cc -- a C++ program linked with libjemalloc.a, for
// tests/alloc (check_jemalloc.py): its operators new and delete are
// jemalloc's (jemalloc_cpp.o, in the executable), some of which reach
// jemalloc's other entry points (new[] jumps to new, delete to free, the
// aligned ones call aligned_alloc and sdallocx) and some its internals
// (new's fast path, sized delete): memtop must count each block once.
// Leaks 1000 bytes from leak_new() (new[]), 300 from leak_nothrow()
// (nothrow new[]) and 128 from leak_aligned() (an over-aligned object:
// aligned new); frees ROUNDS blocks in each way (delete[], sized delete,
// aligned sized delete, nothrow new + delete) in free_all_ways().  Prints
// "ok" and exits 0.  With "throw": first a new[] of PTRDIFF_MAX bytes,
// which jemalloc's operator throws bad_alloc for through memtop's hook, is
// caught; the thread's later blocks must still be counted.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "throw_once.h"

#define ROUNDS 1000

static void *volatile sink[3];

struct Node {
    char pad[48];
};

struct alignas(64) Wide {
    char pad[128];
};

__attribute__((noinline)) static void leak_new()
{
    sink[0] = new char[1000];
}

__attribute__((noinline)) static void leak_nothrow()
{
    sink[1] = new (std::nothrow) char[300];
}

__attribute__((noinline)) static void leak_aligned()
{
    sink[2] = new Wide;
}

__attribute__((noinline)) static void free_all_ways()
{
    for (int i = 0; i < ROUNDS; i++) {
        char *volatile a = new char[100 + i % 50];
        delete[] a;
        Node *volatile n = new Node;
        delete n; // sized delete
        Wide *volatile w = new Wide;
        delete w; // aligned sized delete
        char *volatile c = new (std::nothrow) char[40];
        delete[] c;
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "throw") == 0)
        throw_once();
    free_all_ways();
    leak_new();
    leak_nothrow();
    leak_aligned();
    std::printf("ok\n");
    return 0;
}
