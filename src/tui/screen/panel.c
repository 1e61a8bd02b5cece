/* panel.c -- the viewer's panel instances (see panel.h). */
#include "panel.h"

#include <string.h>

void mt_panels_init(mt_panels *p)
{
    memset(p, 0, sizeof *p);
    p->table.p.cls = &mt_table_class;
    p->detail.p.cls = &mt_detail_class;
    p->help.cls = &mt_help_class;
    p->sort.cls = &mt_sort_class;
    p->picker.cls = &mt_picker_class;
}
