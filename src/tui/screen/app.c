/* app.c -- small operations on the viewer's state (see app.h). */
#include "app.h"

#include <stdio.h>
#include <stdarg.h>

#define STATUS_SECONDS 5.0

void mt_app_status(mt_app *a, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_is_error = error;
    a->status_until = a->now + STATUS_SECONDS * (error ? 2 : 1);
    a->dirty = true;
}

void mt_app_rows_changed(mt_app *a)
{
    a->panels.table.p.sel = 0;
    a->panels.table.p.first = 0;
    a->panels.table.sel_reset = true;
    a->rebuild = true;
    a->dirty = true;
}

void mt_app_push(mt_app *a, mt_panel *p)
{
    if (a->depth < MT_PANEL_DEPTH)
        a->stack[a->depth++] = p;
    a->dirty = true;
}

void mt_app_pop(mt_app *a)
{
    if (a->depth > 1)
        a->depth--;
    else
        a->depth = 0;
    a->dirty = true;
}

int mt_app_attach(mt_app *a, int pid, char *msg, size_t n)
{
    if (mt_source_attach(&a->src, pid, msg, n) != 0)
        return -1;
    mt_symworker_set_modules(a->sym, &a->src.view.mods);
    a->rebuild = true;
    return 0;
}

bool mt_app_in_tree(const mt_app *a)
{
    for (int i = 0; i < a->depth; i++)
        if (a->stack[i] == &a->panels.tree.p)
            return true;
    return false;
}

mt_group_key mt_app_group(const mt_app *a)
{
    return mt_app_in_tree(a) ? MT_GROUP_TRACE : a->ui.group;
}

const mt_snapshot *mt_app_snapshot(const mt_app *a)
{
    return a->src.view.have_snap ? &a->src.view.snap : NULL;
}
