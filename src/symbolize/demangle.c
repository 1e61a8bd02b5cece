/* demangle.c -- see demangle.h.  libiberty knows C++ (Itanium ABI), Rust
 * legacy (_ZN...17h<hash>E: the hash is dropped unless DMGL_VERBOSE) and
 * Rust v0 (_R...).  A "::h<16 hex>" suffix that survives (a legacy name
 * libiberty did not recognise as Rust) is stripped here. */
#include "demangle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

static bool is_hex(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
    return true;
}

/* "foo::bar::h0123456789abcdef" -> "foo::bar" */
static void strip_rust_hash(char *s)
{
    size_t n = strlen(s);
    if (n >= 19 && memcmp(s + n - 19, "::h", 3) == 0 && is_hex(s + n - 16, 16))
        s[n - 19] = '\0';
}

static bool looks_mangled(const char *name)
{
    return (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
           (name[0] == '_' && name[1] == '_' && name[2] == 'Z');
}

char *mt_demangle(const char *name)
{
    char *out = NULL;
    if (looks_mangled(name))
        out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
    if (!out)
        out = strdup(name);
    if (out)
        strip_rust_hash(out);
    return out;
}
