/* throw_once.h -- one C++ operator new[] that throws bad_alloc through
 * memtop's hook of the allocator under test (alloc_je_cpp.cc and
 * alloc_tcmalloc.cc, argument "throw"): the thread must go on being
 * tracked afterwards (tests/alloc/check_jemalloc.py, check_patch.py).  A
 * request that succeeds says so on stdout, which the checks reject. */
#ifndef MT_TEST_THROW_ONCE_H
#define MT_TEST_THROW_ONCE_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>

__attribute__((noinline)) static void throw_once()
{
    static volatile size_t huge = PTRDIFF_MAX;
    try {
        char *volatile p = new char[huge];
        std::printf("a new[] of %zu bytes succeeded\n", (size_t)huge);
        delete[] p;
    } catch (const std::bad_alloc &) {
    }
}

#endif
