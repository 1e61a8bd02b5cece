/* alloc_mdi.c -- a program whose only trace of an allocator is a static
 * PyObject_Malloc (CPython's pymalloc signature, docs/allocators.md), for
 * check_minidebuginfo.py: once its .symtab is stripped, the function is
 * named only in the MiniDebugInfo (.gnu_debugdata) the test adds. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((used, noinline)) static void *PyObject_Malloc(size_t n)
{
    return malloc(n);
}

int main(void)
{
    void *p = PyObject_Malloc(10);
    printf("%s\n", p ? "ok" : "no memory");
    free(p);
    return 0;
}
