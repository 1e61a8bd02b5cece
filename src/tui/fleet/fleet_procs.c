/* fleet_procs.c -- the exporter's process table (see fleet_procs.h). */
#include "fleet_procs.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet_container.h"
#include "grow.h"
#include "proc_list.h"

uint64_t mt_fleet_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mt_fleet_init(mt_fleet *f, const char *dir, bool symbols, const char *skip_env)
{
    memset(f, 0, sizeof *f);
    f->dir = dir;
    return mt_symbols_init(&f->syms, symbols, skip_env);
}

static void proc_free(mt_fleet_proc *p)
{
    mt_view_detach(&p->v);
    free(p->pprof);
    free(p);
}

void mt_fleet_free(mt_fleet *f)
{
    for (size_t i = 0; i < f->count; i++)
        proc_free(f->procs[i]);
    free(f->procs);
    mt_symbols_free(&f->syms);
    memset(f, 0, sizeof *f);
}

mt_fleet_proc *mt_fleet_find(const mt_fleet *f, int pid)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->procs[i]->pid == pid)
            return f->procs[i];
    return NULL;
}

mt_fleet_class mt_fleet_classify(mt_errc rc, bool alive)
{
    switch (rc) {
    case MT_OK: /* read, but exited or stale by now */
        return MT_FLEET_NOT_RUNNING;
    case MT_E_NOENT: /* removed at exit between the listing and the open */
    case MT_E_GONE:
        return MT_FLEET_GONE;
    /* The process is gone but its file is there: a crash's leftover, or
     * an exit caught before the file was removed. */
    case MT_E_NOTREADY: /* being created, or no consistent snapshot yet */
    case MT_E_EMPTY:
    case MT_E_BUSY:
        return alive ? MT_FLEET_STARTING : MT_FLEET_NOT_RUNNING;
    case MT_E_PERM: /* a gone process's file cannot be checked against it */
    case MT_E_UNTRUSTED:
        return alive ? MT_FLEET_DENIED : MT_FLEET_NOT_RUNNING;
    default:
        return MT_FLEET_ERROR;
    }
}

static void count(mt_fleet *f, mt_fleet_class c)
{
    size_t *n[] = {[MT_FLEET_GONE] = NULL,
                   [MT_FLEET_STARTING] = &f->starting,
                   [MT_FLEET_NOT_RUNNING] = &f->not_running,
                   [MT_FLEET_DENIED] = &f->denied,
                   [MT_FLEET_ERROR] = &f->errors};
    if (n[c])
        (*n[c])++;
}

/* Attach to pid once, without waiting; NULL if it cannot be (yet), with
 * what it is in *cls. */
static mt_fleet_proc *proc_new(mt_fleet *f, int pid, mt_fleet_class *cls)
{
    *cls = MT_FLEET_ERROR;
    mt_fleet_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->pid = pid;
    mt_view_init(&p->v);
    mt_err err;
    mt_errc rc = mt_view_attach_pid(&p->v, f->dir, pid, &err);
    if (rc == MT_OK)
        rc = mt_view_refresh(&p->v, &err);
    if (rc != MT_OK || mt_view_state(&p->v) != MT_STATE_RUNNING) {
        *cls = mt_fleet_classify(rc, mt_pid_exists(pid));
        mt_view_detach(&p->v);
        free(p);
        return NULL;
    }
    p->loc = mt_symbols_locator(&f->syms, &p->v.mods);
    mt_container_label(pid, p->container, sizeof p->container);
    return p;
}

/* Refresh a kept process; false when it is to be forgotten (exited,
 * stale, its segment unreadable). */
static bool proc_update(mt_fleet_proc *p)
{
    mt_err err;
    mt_errc rc = mt_view_refresh(&p->v, &err);
    if (rc && !mt_view_transient(rc))
        return false;
    return p->v.attached && p->v.have_snap && mt_view_state(&p->v) == MT_STATE_RUNNING;
}

/* Keep (or add) the listed running process e. */
static void visit(mt_fleet *f, const mt_proc_entry *e)
{
    mt_fleet_proc *p = mt_fleet_find(f, e->pid);
    if (p) {
        p->seen = true;
        return;
    }
    if (f->min_age_s && (!e->have_totals || e->uptime_s < f->min_age_s)) {
        /* no snapshot yet: not old enough to be known old enough */
        if (e->have_totals)
            f->too_young++;
        else
            f->starting++;
        return;
    }
    if (f->count >= MT_FLEET_MAX_PROCS) {
        f->skipped++;
        return;
    }
    if (mt_grow((void **)&f->procs, &f->cap, f->count + 1, sizeof *f->procs) != 0) {
        f->errors++; /* out of memory */
        return;
    }
    mt_fleet_class cls;
    if (!(p = proc_new(f, e->pid, &cls))) {
        count(f, cls);
        return;
    }
    p->seen = true;
    f->procs[f->count++] = p;
}

static void list(mt_fleet *f)
{
    mt_proc_list l = {0};
    mt_err err;
    f->listed = f->starting = f->too_young = f->denied = f->not_running = 0;
    f->skipped = f->errors = 0;
    if (mt_proc_list_read(f->dir, &l, &err) != MT_OK)
        return;
    f->listed = l.count;
    for (size_t i = 0; i < l.count; i++) {
        const mt_proc_entry *e = &l.items[i];
        if (e->ok && strcmp(e->state, "running") == 0)
            visit(f, e);
        else if (e->ok)
            f->not_running++;
        else
            count(f, mt_fleet_classify(e->rc, mt_pid_exists(e->pid)));
    }
    mt_proc_list_free(&l);
}

static int by_pid(const void *a, const void *b)
{
    int x = (*(mt_fleet_proc *const *)a)->pid, y = (*(mt_fleet_proc *const *)b)->pid;
    return (x > y) - (x < y);
}

bool mt_fleet_refresh(mt_fleet *f, uint64_t min_age_ns)
{
    uint64_t now = mt_fleet_now_ns();
    if (f->refreshed_ns && now - f->refreshed_ns < min_age_ns)
        return false;
    for (size_t i = 0; i < f->count; i++)
        f->procs[i]->seen = false;
    size_t old = f->count;
    list(f);
    size_t kept = 0;
    for (size_t i = 0; i < f->count; i++) {
        mt_fleet_proc *p = f->procs[i];
        /* new ones were read by proc_new just now */
        bool keep = p->seen && (i >= old || proc_update(p));
        if (keep)
            f->procs[kept++] = p;
        else
            proc_free(p);
    }
    f->count = kept;
    qsort(f->procs, f->count, sizeof *f->procs, by_pid);
    f->refreshed_ns = mt_fleet_now_ns();
    f->generation++;
    return true;
}
