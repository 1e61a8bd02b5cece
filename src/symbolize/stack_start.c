/* stack_start.c -- see stack_start.h. */
#include "stack_start.h"

#include <string.h>

bool mt_stack_start(const char *function)
{
    static const char *const starts[] = {"_start",
                                         "__libc_start_call_main",
                                         "__libc_start_main",
                                         "__libc_start_main_impl",
                                         "start_thread",
                                         "clone",
                                         "clone3",
                                         "__clone",
                                         "__clone3",
                                         "__clone_internal",
                                         "_dl_start_user",
                                         "_dl_init",
                                         "call_init",
                                         "_dl_start",
                                         "_start_c", /* musl */
                                         NULL};
    for (const char *const *s = starts; function && *s; s++)
        if (strcmp(function, *s) == 0)
            return true;
    return false;
}
