/* view.c -- keeping a target's snapshot, definitions and modules together
 * (see view.h). */
#include "view.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void mt_view_init(mt_view *v)
{
    memset(v, 0, sizeof *v);
    v->seg.fd = -1;
    v->segment_bytes = MT_UNKNOWN;
    mt_defs_init(&v->defs);
    mt_modules_init(&v->mods);
}

mt_errc mt_view_attach(mt_view *v, const char *path, mt_err *err)
{
    char keep[sizeof v->path];
    snprintf(keep, sizeof keep, "%s", path);
    mt_view_detach(v);
    mt_view_target(v, NULL, 0);
    memcpy(v->path, keep, sizeof v->path);
    mt_errc rc = mt_segment_open_path(&v->seg, path, err);
    v->attached = rc == MT_OK;
    return rc;
}

void mt_view_target(mt_view *v, const char *dir, int pid)
{
    v->dir = dir;
    v->pid = pid;
}

mt_errc mt_view_attach_pid(mt_view *v, const char *dir, int pid, mt_err *err)
{
    mt_view_detach(v);
    mt_view_target(v, dir, pid);
    if (mt_shm_locate(dir, pid, v->path, sizeof v->path) != 0)
        return mt_err_set(err, MT_E_IO, "segment directory name too long: %s", dir);
    mt_errc rc = mt_segment_open_for(&v->seg, v->path, pid, err);
    v->attached = rc == MT_OK;
    return rc;
}

void mt_view_detach(mt_view *v)
{
    if (v->attached)
        mt_segment_close(&v->seg);
    mt_defs_free(&v->defs);
    mt_modules_free(&v->mods);
    mt_snapshot_free(&v->snap);
    mt_snapshot_free(&v->prev);
    char keep[sizeof v->path];
    memcpy(keep, v->path, sizeof keep);
    const char *dir = v->dir;
    int pid = v->pid;
    mt_view_init(v);
    memcpy(v->path, keep, sizeof v->path);
    mt_view_target(v, dir, pid);
}

/* From the flags read with the snapshot (v->snap.flags), which callers
 * also label it with: the header's flags read again now may have gained
 * EXITED | EXECED since (the target exec'd after the refresh), and a state
 * "exited" beside a snapshot without EXECED would read as a final exit.
 * Only if those flags make the segment stale (the process ended since)
 * do the current flags decide: its final snapshot may have come just
 * after the one we hold. */
mt_state mt_view_state(const mt_view *v)
{
    if (!v->have_snap)
        return mt_segment_state(&v->seg);
    mt_state st = mt_segment_state_flags(&v->seg, v->snap.flags);
    return st == MT_STATE_STALE ? mt_segment_state(&v->seg) : st;
}

const char *mt_view_cmdline(const mt_view *v)
{
    if (v->live.valid && v->live.cmdline[0])
        return v->live.cmdline;
    return v->seg.id.cmdline[0] ? v->seg.id.cmdline : v->seg.id.exe;
}

uint64_t mt_view_uptime_ns(const mt_view *v)
{
    if (v->live.valid)
        return v->live.uptime_ns;
    uint64_t t = v->snap.slot.t_ns;
    return t > v->start_ns ? t - v->start_ns : 0;
}

uint64_t mt_view_uptime_s(const mt_view *v)
{
    return v->live.valid ? v->live.uptime_s : mt_view_uptime_ns(v) / 1000000000ull;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* now - then, 0 for a time in the future (a clock set back). */
static uint64_t since(uint64_t now, uint64_t then)
{
    return then && now > then ? now - then : 0;
}

/* The target's last publish: the header's heartbeat (read now, so that a
 * viewer that does not refresh, paused or between -d reports, does not
 * make its target stale), else the snapshot's own time. */
static uint64_t last_publish_ns(const mt_view *v)
{
    uint64_t hb = 0;
    if (mt_segment_load64(&v->seg, &mt_segment_header(&v->seg)->heartbeat_unix_ns, &hb, NULL))
        hb = 0;
    return hb > v->snap.slot.unix_ns ? hb : v->snap.slot.unix_ns;
}

uint64_t mt_view_stale_after_ns(const mt_view *v)
{
    uint64_t ms = v->seg.id.publish_interval_ms ? v->seg.id.publish_interval_ms : 1000u;
    ms *= MT_VIEW_STALE_INTERVALS;
    return (ms < MT_VIEW_STALE_MIN_MS ? MT_VIEW_STALE_MIN_MS : ms) * 1000000u;
}

mt_staleness mt_view_staleness(const mt_view *v)
{
    mt_staleness s = {0};
    if (!v->attached || !v->have_snap)
        return s;
    uint64_t now = wall_ns();
    s.age_ns = since(now, v->snap.slot.unix_ns);
    s.silent_ns = since(now, last_publish_ns(v));
    s.proc_state = v->live.valid ? v->live.state : 0;
    /* live.valid: the segment's creator runs (not exited, not gone) */
    s.stale = v->live.valid && !(v->snap.flags & MT_FLAG_EXITED) &&
              s.silent_ns >= mt_view_stale_after_ns(v);
    mt_state st = mt_view_state(v);
    s.ended = st == MT_STATE_EXITED  ? "exited"
              : st == MT_STATE_STALE ? "died"
              : s.stale              ? "stopped"
                                     : NULL;
    return s;
}

const char *mt_staleness_why(const mt_staleness *s)
{
    if (!s->stale && s->ended)
        return strcmp(s->ended, "exited") ? "gone without a final snapshot" : "exited";
    return s->proc_state == 'T'   ? "stopped (state T)"
           : s->proc_state == 't' ? "traced (state t)"
                                  : "not publishing";
}

const char *mt_staleness_label(const mt_staleness *s)
{
    return s->proc_state == 'T'   ? "STOPPED (T)"
           : s->proc_state == 't' ? "TRACED (t)"
                                  : "NOT PUBLISHING";
}

void mt_staleness_text(const mt_view *v, const mt_staleness *s, char *buf, size_t n)
{
    snprintf(buf, n, "snapshot #%llu is %llu s old, none published since: process %s",
             (unsigned long long)v->snap.slot.publish_seq,
             (unsigned long long)(s->age_ns / 1000000000u), mt_staleness_why(s));
}

/* Counters at one moment, a rate's ends. */
typedef struct rate_point {
    uint64_t t_ns, allocs, bytes, frees;
} rate_point;

static rate_point slot_point(const mt_shm_slot *s)
{
    return (rate_point){s->t_ns, s->totals.alloc_count, s->totals.alloc_bytes,
                        s->totals.free_count};
}

/* The shortest window a rate is taken over (mt_rates): MT_RATE_WINDOW_MS
 * and one publish interval, less a tenth of an interval for jitter (a
 * target publishing each second is taken over 0.9 s or more). */
static uint64_t rate_window_ns(const mt_view *v)
{
    uint64_t iv = v->seg.id.publish_interval_ms ? v->seg.id.publish_interval_ms : 1000u;
    uint64_t ms = iv > MT_RATE_WINDOW_MS ? iv : MT_RATE_WINDOW_MS;
    return ms * 1000000u - iv * 100000u;
}

/* The newest point at least w before the snapshot: the previous snapshot
 * or a timeline point, whichever is newer; false if there is none. */
static bool rate_base(const mt_view *v, uint64_t w, rate_point *out)
{
    uint64_t t1 = v->snap.slot.t_ns;
    if (t1 < w)
        return false;
    bool found = v->have_prev && v->prev.slot.t_ns <= t1 - w;
    if (found)
        *out = slot_point(&v->prev.slot);
    const mt_shm_point *tl = v->snap.timeline;
    for (uint32_t i = tl ? v->snap.slot.ntimeline : 0; i-- > 0;) {
        const mt_shm_point *p = &tl[i];
        if (p->t_ns > t1 - w)
            continue;
        if (!found || p->t_ns > out->t_ns)
            *out = (rate_point){p->t_ns, p->alloc_count, p->alloc_bytes, p->free_count};
        return true;
    }
    return found;
}

/* Rates over at least the window (mt_rates), else over the whole life:
 * from tracking's start, when every count was 0. */
static void update_rates(mt_view *v)
{
    memset(&v->rates, 0, sizeof v->rates);
    rate_point a = {0}, b = slot_point(&v->snap.slot);
    bool life = !rate_base(v, rate_window_ns(v), &a);
    if (b.t_ns <= a.t_ns)
        return;
    double dt = (double)(b.t_ns - a.t_ns) / 1e9;
    v->rates.valid = true;
    v->rates.whole_life = life;
    v->rates.window_s = dt;
    v->rates.allocs_per_s = ((double)b.allocs - (double)a.allocs) / dt;
    v->rates.alloc_bytes_per_s = ((double)b.bytes - (double)a.bytes) / dt;
    v->rates.frees_per_s = ((double)b.frees - (double)a.frees) / dt;
}

void mt_view_refresh_live(mt_view *v)
{
    if (v->attached && v->have_snap)
        mt_proc_live_read(&v->seg, &v->live);
}

bool mt_view_transient(mt_errc rc)
{
    return rc == MT_E_NOENT || rc == MT_E_NOTREADY || rc == MT_E_EMPTY || rc == MT_E_BUSY;
}

static mt_errc ensure_attached(mt_view *v, mt_err *err)
{
    if (v->attached && !mt_segment_replaced(&v->seg))
        return MT_OK;
    if (v->pid > 0)
        return mt_view_attach_pid(v, v->dir, v->pid, err);
    if (!v->path[0])
        return mt_err_set(err, MT_E_NOENT, "not attached");
    char path[sizeof v->path];
    memcpy(path, v->path, sizeof path);
    return mt_view_attach(v, path, err);
}

mt_errc mt_view_refresh(mt_view *v, mt_err *err)
{
    mt_errc rc = ensure_attached(v, err);
    if (rc)
        return rc;
    mt_snapshot next;
    rc = mt_snapshot_read(&v->seg, 0, &next, err);
    if (!rc)
        rc = mt_defs_update(&v->defs, &v->seg, err);
    if (!rc)
        rc = mt_modules_update(&v->mods, &v->seg, err);
    mt_shm_allocators allocs;
    mt_err aerr;
    mt_errc arc = rc ? MT_OK : mt_segment_allocators(&v->seg, &allocs, &aerr);
    if (arc == MT_E_CORRUPT)
        rc = mt_err_set(err, arc, "%s", aerr.msg);
    if (!rc && next.slot.defs_count > v->defs.count)
        rc = mt_err_set(err, MT_E_CORRUPT,
                        "corrupt segment: snapshot names %llu traces, %zu "
                        "defined",
                        (unsigned long long)next.slot.defs_count, v->defs.count);
    if (rc) {
        mt_snapshot_free(&next);
        return rc;
    }
    if (v->have_snap && next.slot.publish_seq != v->snap.slot.publish_seq) {
        mt_snapshot_free(&v->prev);
        v->prev = v->snap;
        v->have_prev = true;
    } else {
        mt_snapshot_free(&v->snap);
    }
    v->snap = next;
    v->have_snap = true;
    if (arc == MT_OK)
        v->allocs = allocs;
    mt_proc_live_read(&v->seg, &v->live);
    v->segment_bytes = mt_segment_held_bytes(&v->seg);
    update_rates(v);
    return MT_OK;
}
