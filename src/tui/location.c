/* location.c -- address -> module + offset, with the symbolizer hook (see
 * location.h). */
#include "location.h"

#include "format.h"

#include <stdio.h>
#include <string.h>

void mt_locate(const mt_locator *loc, uint64_t address, mt_frame *out)
{
    memset(out, 0, sizeof *out);
    out->address = address;
    const mt_module_info *m = loc->mods ? mt_modules_find(loc->mods, address) : NULL;
    if (!m)
        return;
    out->module = m->path;
    out->offset = address - m->bias;
    if (loc->symbolize)
        loc->symbolize(loc->ctx, m, out);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

char *mt_frame_short(const mt_frame *f, char *buf, size_t n)
{
    if (!f->module)
        snprintf(buf, n, "0x%llx", (unsigned long long)f->address);
    else if (f->function)
        snprintf(buf, n, "%s (%s+0x%llx)", f->function, base_name(f->module),
                 (unsigned long long)f->offset);
    else
        snprintf(buf, n, "%s+0x%llx", base_name(f->module), (unsigned long long)f->offset);
    return mt_fmt_sanitize(buf);
}
