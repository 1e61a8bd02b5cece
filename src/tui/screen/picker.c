/* picker.c -- choosing a process to watch (see picker.h). */
#include "picker.h"

#include <string.h>

#include "app.h"

#define SCAN_EVERY_S 1.0

bool mt_picker_scan(mt_picker *p, double now)
{
    if (now < p->next_scan)
        return false;
    p->next_scan = now + SCAN_EVERY_S;
    int keep = p->sel >= 0 && (size_t)p->sel < p->list.count ? p->list.items[p->sel].pid : 0;
    mt_proc_list fresh;
    mt_err err;
    mt_proc_list_read(p->dir, &fresh, &err); /* empty on error: the directory may not exist yet */
    mt_proc_list_free(&p->list);
    p->list = fresh;
    for (size_t i = 0; keep && i < p->list.count; i++)
        if (p->list.items[i].pid == keep)
            p->sel = (long)i;
    return true;
}

void mt_picker_clamp(mt_picker *p, int visible)
{
    long n = (long)p->list.count;
    if (p->sel >= n)
        p->sel = n - 1;
    if (p->sel < 0)
        p->sel = 0;
    if (p->first > p->sel)
        p->first = p->sel;
    if (visible > 0 && p->sel >= p->first + visible)
        p->first = p->sel - visible + 1;
}

void mt_picker_choose(mt_app *a)
{
    mt_picker *p = &a->picker;
    if (p->sel < 0 || (size_t)p->sel >= p->list.count)
        return;
    char msg[1024];
    int pid = p->list.items[p->sel].pid;
    if (mt_app_attach(a, pid, msg, sizeof msg) != 0) {
        mt_app_status(a, true, "%s", msg);
        p->next_scan = 0;
        return;
    }
    mt_app_pop(a);
    mt_app_push(a, &mt_table_panel);
}

void mt_picker_free(mt_picker *p)
{
    mt_proc_list_free(&p->list);
}
