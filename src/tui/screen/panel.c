/* panel.c -- the viewer's panel instances (see panel.h). */
#include "panel.h"

#include <string.h>

void mt_panels_init(mt_panels *p)
{
    memset(p, 0, sizeof *p);
    p->table.p.cls = &mt_table_class;
    p->detail.p.cls = &mt_detail_class;
    p->tree.p.cls = &mt_tree_class;
    p->help.cls = &mt_help_class;
    p->sort.cls = &mt_sort_class;
    p->picker.cls = &mt_picker_class;
}

void mt_panel_clamp(mt_panel *u, long nrows, int visible)
{
    if (u->sel >= nrows)
        u->sel = nrows - 1;
    if (u->sel < 0)
        u->sel = 0;
    if (visible > 0 && u->first > nrows - visible)
        u->first = nrows - visible;
    if (u->first > u->sel)
        u->first = u->sel;
    if (visible > 0 && u->sel >= u->first + visible)
        u->first = u->sel - visible + 1;
    if (u->first < 0)
        u->first = 0;
}
