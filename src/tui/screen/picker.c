/* picker.c -- choosing a process to watch (see picker.h). */
#include "picker.h"

#include <string.h>

#include "app.h"

#define SCAN_EVERY_S 1.0

bool mt_picker_scan(mt_picker *p, mt_panel *view, double now)
{
    if (now < p->next_scan)
        return false;
    p->next_scan = now + SCAN_EVERY_S;
    long sel = view->sel;
    int keep = sel >= 0 && (size_t)sel < p->list.count ? p->list.items[sel].pid : 0;
    mt_proc_list fresh;
    mt_err err;
    mt_proc_list_read(p->dir, &fresh, &err); /* empty on error: the directory may not exist yet */
    mt_proc_list_free(&p->list);
    p->list = fresh;
    for (size_t i = 0; keep && i < p->list.count; i++)
        if (p->list.items[i].pid == keep)
            view->sel = (long)i;
    return true;
}

void mt_picker_clamp(const mt_picker *p, mt_panel *view, int visible)
{
    long n = (long)p->list.count;
    if (view->sel >= n)
        view->sel = n - 1;
    if (view->sel < 0)
        view->sel = 0;
    if (view->first > view->sel)
        view->first = view->sel;
    if (visible > 0 && view->sel >= view->first + visible)
        view->first = view->sel - visible + 1;
}

void mt_picker_choose(mt_app *a)
{
    mt_picker *p = &a->picker;
    long sel = a->panels.picker.sel;
    if (sel < 0 || (size_t)sel >= p->list.count)
        return;
    char msg[1024];
    int pid = p->list.items[sel].pid;
    if (mt_app_attach(a, pid, msg, sizeof msg) != 0) {
        mt_app_status(a, true, "%s", msg);
        p->next_scan = 0;
        return;
    }
    mt_app_pop(a);
    mt_app_push(a, &a->panels.table.p);
}

void mt_picker_free(mt_picker *p)
{
    mt_proc_list_free(&p->list);
}
