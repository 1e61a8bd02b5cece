/* dat_reader_tables.c -- definitions and modules from recording events
 * (see dat_reader_tables.h). */
#include "dat_reader_tables.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

mt_errc mt_dat_defs_add(mt_defs *d, const mt_dat_def *def, uint64_t first_seen_ns, mt_err *err)
{
    if (def->id != d->count || def->nframes > MT_MAX_DEPTH)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: definition %zu has id %u",
                          d->count, def->id);
    mt_def_info info = {def->hash, first_seen_ns, 0, def->nframes, def->flags};
    return mt_defs_push(d, &info, def->frames, err);
}

mt_errc mt_dat_modules_add(mt_modules *m, const mt_dat_module *mod, uint64_t load_seq, mt_err *err)
{
    if (mod->start >= mod->end || mod->build_id_len > MT_BUILD_ID_MAX ||
        !memchr(mod->path, '\0', sizeof mod->path))
        return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: module %zu", m->count);
    if (mt_grow((void **)&m->items, &m->cap, m->count + 1, sizeof *m->items))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the module map");
    mt_module_info *o = &m->items[m->count++];
    memset(o, 0, sizeof *o);
    o->bias = mod->bias;
    o->start = mod->start;
    o->end = mod->end;
    o->load_seq = load_seq;
    o->build_id_len = mod->build_id_len;
    memcpy(o->build_id, mod->build_id, sizeof o->build_id);
    memcpy(o->path, mod->path, sizeof o->path);
    mt_errc rc = mt_modules_index_last(m, err);
    if (rc)
        m->count--; /* not indexed: lookups see the modules before it, all indexed */
    return rc;
}

void mt_dat_modules_unload(mt_modules *m, uint64_t start, uint64_t seq)
{
    for (size_t i = m->count; i-- > 0;) {
        if (m->items[i].start == start && m->items[i].unload_seq == 0) {
            m->items[i].unload_seq = seq ? seq : 1;
            return;
        }
    }
}
