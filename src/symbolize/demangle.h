/* demangle.h -- C++ and Rust (legacy and v0) names to readable ones,
 * through libiberty's cplus_demangle. */
#ifndef MEMTOP_DEMANGLE_H
#define MEMTOP_DEMANGLE_H

/* A malloc'd readable name: the demangled one, or a copy of name when it is
 * not mangled (C) or cannot be demangled.  NULL only when out of memory. */
char *mt_demangle(const char *name);

#endif
