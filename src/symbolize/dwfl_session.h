/* dwfl_session.h -- one module file opened with libdwfl, offline: the
 * addresses it is asked about are ELF virtual addresses in the file. */
#ifndef MEMTOP_DWFL_SESSION_H
#define MEMTOP_DWFL_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include "cu_index.h"

typedef struct mt_dwfl_session {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    mt_cu_index scopes;     /* CUs indexed so far */
    const char *unresolved; /* why every address of the module is unknown, or NULL */
    bool symtab_only;       /* its DWARF names other files (untrusted module): not read */
} mt_dwfl_session;

/* Opens path unless it is not a file, is gone, or its build-id differs
 * from the recorded one (then s->unresolved says so and s->dwfl is NULL). */
void mt_dwfl_open(mt_dwfl_session *s, const char *path, const uint8_t *build_id,
                  unsigned build_id_len);

void mt_dwfl_close(mt_dwfl_session *s);

#endif
