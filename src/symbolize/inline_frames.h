/* inline_frames.h -- the source-level frames at one address of a module:
 * the innermost inlined function first, then each function it was inlined
 * into, ending with the function that was really called (the order of
 * `eu-addr2line -i -f`).  Without DWARF: the .symtab/.dynsym name. */
#ifndef MEMTOP_INLINE_FRAMES_H
#define MEMTOP_INLINE_FRAMES_H

#include <stdbool.h>

#include <elfutils/libdwfl.h>

#include "cu_index.h"

#define MT_MAX_INLINE 64

/* Strings belong to libdw (valid while the Dwfl lives); names mangled. */
typedef struct mt_raw_frame {
    const char *name, *file;
    const char *dir; /* compilation directory of a relative file, else NULL */
    unsigned line;
    bool inlined;
} mt_raw_frame;

/* Number of frames written (0: nothing known at addr), at most max.
 * symtab_only: the module's DWARF is not read, only its symbol name. */
unsigned mt_inline_frames(Dwfl_Module *mod, mt_cu_index *idx, bool symtab_only, Dwarf_Addr addr,
                          mt_raw_frame *out, unsigned max);

#endif
