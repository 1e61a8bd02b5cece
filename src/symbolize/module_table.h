/* module_table.h -- the module files the symbolizer has opened, one per
 * (path, build-id), each with its libdwfl session or the reason it has
 * none. */
#ifndef MEMTOP_MODULE_TABLE_H
#define MEMTOP_MODULE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dwfl_session.h"
#include "symbolizer.h"

typedef struct mt_sym_modfile {
    char *path;
    uint8_t build_id[64];
    unsigned build_id_len;
    mt_dwfl_session session;
} mt_sym_modfile;

typedef struct mt_module_table {
    mt_sym_modfile *items;
    size_t count, cap;
    uint32_t *index; /* open addressing: item index + 1, 0 = empty */
    size_t index_cap;
    size_t last;              /* item of the last lookup + 1 (consecutive frames share modules) */
    mt_debuginfod debuginfod; /* shared by the sessions */
} mt_module_table;

void mt_module_table_init(mt_module_table *t);
void mt_module_table_free(mt_module_table *t);

/* The entry for m (opened on first use): its number (index + 1), or 0
 * when out of memory. */
uint32_t mt_module_table_get(mt_module_table *t, const mt_sym_module *m);

#endif
