/* exec_segment.h -- where a module's code lies in its file: its executable
 * loadable segment (PT_LOAD with PF_X), read from the module's ELF file.
 *
 * A pprof Mapping must say what the module's r-xp line of /proc/PID/maps
 * says (start, limit, file offset): pprof, Parca and Pyroscope turn an
 * address into a file offset with it, then into an ELF virtual address
 * through the program headers.  A recording has no maps to read, so the
 * segment comes from the file, opened as the symbolizer opens it (the
 * path, else the live target's own names for it, proc_file.h) and taken
 * only when its build-id is the module's. */
#ifndef MEMTOP_EXEC_SEGMENT_H
#define MEMTOP_EXEC_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer.h"

typedef struct mt_exec_segment {
    uint64_t vaddr, memsz; /* p_vaddr, p_memsz */
    uint64_t offset;       /* p_offset */
} mt_exec_segment;

/* m's one executable PT_LOAD segment into *out: true; false when m has no
 * build-id, its file cannot be opened or has another build-id, is not a
 * well-formed ELF file (a segment outside the file, sizes that overflow),
 * or has no or several executable loadable segments. */
bool mt_exec_segment_of(const mt_sym_module *m, mt_exec_segment *out);

#endif
