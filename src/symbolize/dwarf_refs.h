/* dwarf_refs.h -- does a module's DWARF name other files libdw would open?
 * A dwz alternate file (.gnu_debugaltlink, DWARF 5 .debug_sup) or split
 * DWARF (skeleton units naming a .dwo): libdw opens those by the path
 * written in the file, blocking and following links, the first time a
 * DIE refers to them.  For another user's module that path is theirs. */
#ifndef MEMTOP_DWARF_REFS_H
#define MEMTOP_DWARF_REFS_H

#include <stdbool.h>

#include <elfutils/libdw.h>

/* True if dw names another file, or cannot be read far enough to tell.
 * Reads section names and unit headers only: never follows a reference. */
bool mt_dwarf_names_files(Dwarf *dw);

#endif
