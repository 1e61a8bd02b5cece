/* stack_start.h -- the functions a stack starts in: a program's entry
 * (_start, glibc's __libc_start_call_main), a thread's (start_thread,
 * clone3), the dynamic loader's constructor calls.
 *
 * Why: a backtrace whose outermost frame is none of these was cut before
 * the stack's start (code without unwind tables or frame pointers stops
 * the walk), and its LOCATION may be a callee of the code that matters;
 * the viewer says so instead of showing it as whole. */
#ifndef MT_STACK_START_H
#define MT_STACK_START_H

#include <stdbool.h>

/* Whether a demangled function name is one a stack starts in. */
bool mt_stack_start(const char *function);

#endif
