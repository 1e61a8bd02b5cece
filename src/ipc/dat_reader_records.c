/* dat_reader_records.c -- decoding and validating each record type of a
 * recording into events (see dat_format.h for the fields).  Every varint,
 * string, count, id and delta is checked against the payload's end and the
 * format's limits; fields appended by newer writers are ignored. */
#include "dat_reader_events2.h"
#include "dat_reader_impl.h"
#include "shm_allocators.h"

#include <stdlib.h>
#include <string.h>

static mt_errc bad(const mt_dat_reader *r, const char *what, mt_err *err)
{
    return mt_err_set(err, MT_E_CORRUPT, "corrupt recording: %s (record %llu)", what,
                      (unsigned long long)r->records);
}

/* A time field: also the time of the records without one. */
static bool get_t(mt_dat_reader *r, mt_dcur *c, uint64_t *t)
{
    if (!mt_dcur_v(c, t))
        return false;
    if (*t > r->t_last)
        r->t_last = *t;
    return true;
}

/* A string into dst (NUL-terminated, cut to dstsz - 1). */
static bool get_s(mt_dcur *c, char *dst, size_t dstsz, size_t *len)
{
    uint64_t n;
    if (!mt_dcur_v(c, &n) || n > MT_DAT_STRING_MAX || n > (uint64_t)(c->end - c->p))
        return false;
    size_t k = n < dstsz - 1 ? (size_t)n : dstsz - 1;
    memcpy(dst, c->p, k);
    dst[k] = '\0';
    if (len)
        *len = (size_t)n;
    c->p += n;
    return true;
}

/* Version 3's appended fields: the recording mode and the sampling rate
 * (0: exact).  Older files end before them; a field a newer writer appends
 * after them is ignored. */
static mt_errc dec_process_v3(mt_dat_reader *r, mt_dcur *c, mt_dat_process *p, mt_err *err)
{
    uint64_t mode;
    if (r->info.version < 3)
        return MT_OK;
    if (!mt_dcur_v(c, &mode) || !mt_dcur_v(c, &p->cull_ms) || !mt_dcur_v(c, &p->young_max) ||
        !mt_dcur_v(c, &p->sample_rate_bytes))
        return bad(r, "PROCESS record mode or sampling rate cut short", err);
    if (mode > MT_DAT_MODE_CULLED ||
        (mode == MT_DAT_MODE_CULLED && (!p->cull_ms || p->cull_ms > MT_DAT_CULL_MS_MAX)))
        return bad(r, "PROCESS record mode out of range", err);
    p->record_mode = (uint32_t)mode;
    r->culled = mode == MT_DAT_MODE_CULLED;
    if (r->info.version < MT_DAT_VERSION_TICKS)
        return MT_OK;
    uint64_t order;
    if (!mt_dcur_v(c, &order))
        return bad(r, "PROCESS record order cut short", err);
    if (order > MT_DAT_ORDER_TICK)
        return bad(r, "PROCESS record order out of range", err);
    p->tick_order = order == MT_DAT_ORDER_TICK;
    r->tick_order = p->tick_order;
    return MT_OK;
}

static mt_errc dec_process(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_process *p = &ev->u.proc;
    memset(p, 0, sizeof *p);
    uint64_t pid, ppid, uid, depth, interval;
    if (r->have_process)
        return bad(r, "a second PROCESS record", err);
    if (!mt_dcur_v(c, &pid) || !mt_dcur_v(c, &ppid) || !mt_dcur_v(c, &uid) ||
        !mt_dcur_v(c, &p->proc_start_ticks) || !mt_dcur_v(c, &p->start_unix_ns) ||
        !get_t(r, c, &p->record_start) || !mt_dcur_v(c, &p->record_unix_ns) ||
        !mt_dcur_v(c, &depth) || !mt_dcur_v(c, &p->temporary_ns) || !mt_dcur_v(c, &interval) ||
        !mt_dcur_v(c, &p->flags) || !get_s(c, p->exe, sizeof p->exe, NULL) ||
        !get_s(c, p->cmdline, sizeof p->cmdline, NULL))
        return bad(r, "PROCESS record cut short", err);
    if (pid > INT32_MAX || ppid > INT32_MAX || uid > UINT32_MAX || depth > MT_MAX_DEPTH ||
        interval > UINT32_MAX)
        return bad(r, "PROCESS record out of range", err);
    p->pid = (int32_t)pid;
    p->ppid = (int32_t)ppid;
    p->uid = (uint32_t)uid;
    p->max_depth = (uint32_t)depth;
    p->publish_interval_ms = (uint32_t)interval;
    mt_errc rc = dec_process_v3(r, c, p, err);
    if (rc)
        return rc;
    r->have_process = true;
    ev->kind = MT_DAT_PROCESS;
    ev->t_ns = p->record_start;
    return MT_OK;
}

static mt_errc dec_module(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_module *m = &ev->u.mod;
    memset(m, 0, sizeof *m);
    uint64_t seen;
    char id[MT_DAT_STRING_MAX + 1];
    size_t idlen, pathlen;
    if (!mt_dcur_v(c, &m->index) || !get_t(r, c, &seen) || !mt_dcur_v(c, &m->bias) ||
        !mt_dcur_v(c, &m->start) || !mt_dcur_v(c, &m->end) || !get_s(c, id, sizeof id, &idlen) ||
        !get_s(c, m->path, sizeof m->path, &pathlen))
        return bad(r, "MODULE record cut short", err);
    if (m->index != r->nmodules)
        return bad(r, "MODULE index out of order", err);
    if (m->start >= m->end || idlen > MT_BUILD_ID_MAX)
        return bad(r, "MODULE with a bad range or build id", err);
    memcpy(m->build_id, id, idlen);
    m->build_id_len = (uint32_t)idlen;
    r->nmodules++;
    ev->kind = MT_DAT_MODULE;
    ev->t_ns = seen;
    return MT_OK;
}

static mt_errc dec_unload(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    uint64_t next_trace = 0;
    if (!mt_dcur_v(c, &ev->u.unload.index) || !get_t(r, c, &ev->t_ns))
        return bad(r, "MODULE_UNLOAD record cut short", err);
    if (c->p != c->end && !mt_dcur_v(c, &next_trace)) /* appended; absent in older files */
        return bad(r, "MODULE_UNLOAD record cut short", err);
    if (ev->u.unload.index >= r->nmodules)
        return bad(r, "MODULE_UNLOAD of an unknown module", err);
    ev->u.unload.next_trace = next_trace <= UINT32_MAX ? (uint32_t)next_trace : 0;
    ev->kind = MT_DAT_UNLOAD;
    return MT_OK;
}

static mt_errc dec_trace(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_def *d = &ev->u.def;
    uint64_t id, flags, n;
    if (!mt_dcur_v(c, &id) || !mt_dcur_v(c, &flags) || !get_t(r, c, &ev->t_ns) ||
        !mt_dcur_v(c, &d->hash) || !mt_dcur_v(c, &n))
        return bad(r, "TRACE record cut short", err);
    if (id != r->ndefs || id > UINT32_MAX - 1)
        return bad(r, "TRACE id out of order", err);
    if (n > MT_MAX_DEPTH || flags > UINT16_MAX)
        return bad(r, "TRACE with too many frames", err);
    for (uint64_t i = 0; i < n; i++) {
        int64_t delta;
        if (i == 0 ? !mt_dcur_v(c, &d->frames[0]) : !mt_dcur_z(c, &delta))
            return bad(r, "TRACE frames cut short", err);
        if (i)
            d->frames[i] = d->frames[i - 1] + (uint64_t)delta;
    }
    d->id = (uint32_t)id;
    d->nframes = (uint16_t)n;
    d->flags = (uint16_t)flags;
    r->ndefs++;
    ev->kind = MT_DAT_DEF;
    return MT_OK;
}

static mt_errc dec_totals(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_totals *t = &ev->u.totals;
    memset(t, 0, sizeof *t);
    uint64_t n, v;
    if (!get_t(r, c, &ev->t_ns) || !mt_dcur_v(c, &t->unix_ns) || !mt_dcur_v(c, &n))
        return bad(r, "TOTALS record cut short", err);
    if (n > MT_DAT_TOTALS_FIELDS_MAX)
        return bad(r, "TOTALS with too many fields", err);
    for (uint64_t i = 0; i < n; i++) {
        if (!mt_dcur_v(c, &v))
            return bad(r, "TOTALS fields cut short", err);
        if (i < MT_DAT_TOTALS_FIELDS)
            t->f[i] = v;
    }
    t->nfields = n < MT_DAT_TOTALS_FIELDS ? (uint32_t)n : MT_DAT_TOTALS_FIELDS;
    if (!mt_dcur_v(c, &t->events_written) || !mt_dcur_v(c, &t->events_dropped))
        return bad(r, "TOTALS record cut short", err);
    ev->kind = MT_DAT_TOTALS;
    return MT_OK;
}

static mt_errc dec_state_begin(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    uint64_t kind;
    if (!mt_dcur_v(c, &kind) || !get_t(r, c, &ev->t_ns) || !mt_dcur_v(c, &ev->u.state.unix_ns))
        return bad(r, "STATE_BEGIN record cut short", err);
    if (r->in_set)
        return bad(r, "a state set inside another", err);
    if (kind != MT_DAT_STATE_INITIAL && kind != MT_DAT_STATE_FINAL)
        return bad(r, "unknown state set kind", err);
    r->in_set = true;
    r->set_kind = (uint32_t)kind;
    r->set_ntraces = r->set_nlive = 0;
    ev->u.state.kind = (uint32_t)kind;
    ev->kind = MT_DAT_STATE_BEGIN;
    return MT_OK;
}

static mt_errc dec_state_end(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    uint64_t kind;
    if (!mt_dcur_v(c, &kind) || !mt_dcur_v(c, &ev->u.state.ntraces) ||
        !mt_dcur_v(c, &ev->u.state.nlive))
        return bad(r, "STATE_END record cut short", err);
    if (!r->in_set || kind != r->set_kind)
        return bad(r, "STATE_END without its STATE_BEGIN", err);
    if (ev->u.state.ntraces != r->set_ntraces || ev->u.state.nlive != r->set_nlive)
        return bad(r, "STATE_END counts do not match the state set", err);
    r->in_set = false;
    ev->u.state.kind = (uint32_t)kind;
    ev->t_ns = r->t_last;
    ev->kind = MT_DAT_STATE_END;
    return MT_OK;
}

/* LOST's causes (appended by newer writers; none: not said), into l->why:
 * pairs of cause (ascending, at most MT_DAT_LOST_CAUSE_MAX) and count
 * (>= 1) whose counts add up to the record's events; else corrupt. */
static const char *dec_lost_why(mt_dcur *c, mt_dat_lost *l)
{
    uint64_t events = l->alloc_count + l->free_count;
    if (events < l->alloc_count)
        return "LOST counts more events than a recording can hold";
    if (c->p == c->end) { /* an older writer */
        l->why[MT_DAT_LOST_NOT_SAID] = events;
        return NULL;
    }
    uint64_t n, sum = 0;
    if (!mt_dcur_v(c, &n))
        return "LOST causes cut short";
    if (n > MT_DAT_LOST_CAUSE_MAX + 1)
        return "LOST names too many causes";
    for (uint64_t i = 0, prev = 0; i < n; i++) {
        uint64_t cause, count;
        if (!mt_dcur_v(c, &cause) || !mt_dcur_v(c, &count))
            return "LOST causes cut short";
        if (cause > MT_DAT_LOST_CAUSE_MAX || (i && cause <= prev) || !count)
            return "LOST causes out of order, unknown or empty";
        prev = cause;
        if (sum + count < sum)
            return "LOST causes count more events than it dropped";
        sum += count;
        l->why[cause < MT_DAT_LOST_CAUSES ? cause : MT_DAT_LOST_OTHER] += count;
    }
    if (sum != events)
        return "LOST causes count other events than it dropped";
    return NULL;
}

static mt_errc dec_lost(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_lost *l = &ev->u.lost;
    memset(l, 0, sizeof *l);
    uint64_t tid;
    if (!get_t(r, c, &ev->t_ns) || !mt_dcur_v(c, &tid) || !mt_dcur_v(c, &l->alloc_count) ||
        !mt_dcur_v(c, &l->alloc_bytes) || !mt_dcur_v(c, &l->free_count) ||
        !mt_dcur_v(c, &l->free_bytes))
        return bad(r, "LOST record cut short", err);
    const char *why = dec_lost_why(c, l);
    if (why)
        return bad(r, why, err);
    /* Every record may be sound and their sum still wrap: the totals a
     * reader adds up (replay, exports) would then say fewer, even none. */
    uint64_t events = l->alloc_count + l->free_count;
    if (r->lost_events + events < r->lost_events)
        return bad(r, "LOST records count more events than a recording can hold", err);
    r->lost_events += events;
    l->tid = (uint32_t)tid;
    ev->kind = MT_DAT_LOST;
    return MT_OK;
}

static mt_errc dec_end(mt_dat_reader *r, mt_dcur *c, mt_dat_event *ev, mt_err *err)
{
    mt_dat_end *e = &ev->u.end;
    uint64_t reason, error;
    if (!get_t(r, c, &ev->t_ns) || !mt_dcur_v(c, &e->unix_ns) || !mt_dcur_v(c, &reason) ||
        !mt_dcur_v(c, &error) || !mt_dcur_v(c, &e->events_written) ||
        !mt_dcur_v(c, &e->events_dropped))
        return bad(r, "END record cut short", err);
    e->reason = reason > UINT32_MAX ? UINT32_MAX : (uint32_t)reason;
    e->error = error > UINT32_MAX ? UINT32_MAX : (uint32_t)error;
    ev->kind = MT_DAT_END;
    return MT_OK;
}

/* A string that must fit its field (NUL included), or the record is corrupt. */
static bool get_field(mt_dcur *c, char *dst, size_t dstsz)
{
    size_t len;
    return get_s(c, dst, dstsz, &len) && len < dstsz;
}

/* A valid list read at t: the last one read, and kept by time when newer
 * than the newest kept (a record read again after a seek is not). */
static mt_errc keep_allocators(mt_dat_reader *r, uint64_t t, const mt_shm_allocators *a,
                               mt_err *err)
{
    r->allocs = *a;
    r->have_allocs = true;
    size_t n = r->nalloc_lists;
    if (n && t <= r->alloc_lists[n - 1].t)
        return MT_E_EMPTY;
    if (!r->alloc_lists && !(r->alloc_lists = malloc(MT_DAT_ALLOC_LISTS * sizeof *r->alloc_lists)))
        return mt_err_set(err, MT_E_NOMEM, "out of memory for the allocator lists");
    if (n == MT_DAT_ALLOC_LISTS)
        n--; /* the newest replaces the last kept */
    r->alloc_lists[n].t = t;
    r->alloc_lists[n].a = *a;
    r->nalloc_lists = n + 1;
    return MT_E_EMPTY;
}

/* ALLOCATORS: kept in the reader (mt_dat_allocators, _at), no event.
 * Decoded apart: a corrupt record leaves the last good list as it was. */
static mt_errc dec_allocators(mt_dat_reader *r, mt_dcur *c, mt_err *err)
{
    mt_shm_allocators list, *a = &list;
    uint64_t t, count, inexact, more;
    if (!get_t(r, c, &t) || !mt_dcur_v(c, &count) || !mt_dcur_v(c, &inexact) ||
        !mt_dcur_v(c, &more))
        return bad(r, "ALLOCATORS record cut short", err);
    if (count > MT_ALLOC_MAX || more > UINT32_MAX || inexact > count + more)
        return bad(r, "ALLOCATORS counts out of range", err);
    memset(a, 0, sizeof *a);
    a->seq = 2; /* known (shm_allocators.h: 0 is "not published") */
    a->count = (uint32_t)count;
    a->inexact = (uint32_t)inexact;
    a->more = (uint32_t)more;
    for (uint32_t i = 0; i < a->count; i++) {
        mt_shm_allocator *e = &a->a[i];
        uint64_t kind, flags;
        if (!mt_dcur_v(c, &kind) || !mt_dcur_v(c, &flags) || kind > UINT32_MAX ||
            flags > UINT32_MAX || !get_field(c, e->prefix, sizeof e->prefix) ||
            !get_field(c, e->version, sizeof e->version) ||
            !get_field(c, e->module, sizeof e->module) || !get_field(c, e->note, sizeof e->note))
            return bad(r, "ALLOCATORS entry cut short or too long", err);
        e->kind = (uint32_t)kind;
        e->flags = (uint32_t)flags;
        /* the figures are not recorded */
        e->allocated = e->active = e->resident = e->mapped = e->before_hooks = MT_UNKNOWN;
    }
    if (mt_allocators_check(a, NULL) != MT_OK)
        return bad(r, "ALLOCATORS entry out of range", err);
    mt_allocators_known(a);
    return keep_allocators(r, t, a, err);
}

/* TAG_PAIRS (version 8): the table the frame's EVENTS2 records after it
 * read their tags by (dat_reader_tagpairs.h); no event.  In an earlier
 * version's file: skipped, as an unknown record. */
static mt_errc dec_tag_pairs(mt_dat_reader *r, mt_dcur *c, mt_err *err)
{
    if (!mt_dat_v8(r)) {
        r->skipped++;
        return MT_E_EMPTY;
    }
    const char *why = NULL;
    mt_errc rc = mt_dtp_read(&r->tp, c->p, c->end, &why);
    if (rc == MT_E_NOMEM)
        return mt_err_set(err, MT_E_NOMEM, "out of memory for a table of tag pairs");
    return rc ? bad(r, why, err) : MT_E_EMPTY;
}

/* Records that give their items one by one: read the count, then items. */
static mt_errc start_items(mt_dat_reader *r, uint64_t type, mt_dcur c, mt_dat_event *ev,
                           mt_err *err)
{
    mt_drec *d = &r->rec;
    memset(d, 0, sizeof *d);
    d->type = type;
    d->c = c;
    uint64_t tid = 0;
    bool events = type == MT_DAT_REC_EVENTS || type == MT_DAT_REC_EVENTS2;
    bool culled = type == MT_DAT_REC_CULLED;
    if (events && (!mt_dcur_v(&d->c, &tid) || !get_t(r, &d->c, &d->t) || tid > UINT32_MAX))
        return bad(r, "EVENTS record cut short", err);
    if (culled && !r->culled)
        return bad(r, "CULLED record in a recording that is not culled", err);
    if (culled && (r->in_set || !get_t(r, &d->c, &d->t) || !mt_dcur_v(&d->c, &d->early) ||
                   !mt_dcur_v(&d->c, &d->young)))
        return bad(r, "CULLED record cut short or inside a state set", err);
    if (!events && !culled && !r->in_set)
        return bad(r, "state entries outside a state set", err);
    if (!mt_dcur_v(&d->c, &d->left))
        return bad(r, "record cut short", err);
    uint64_t max = events ? MT_DAT_EVENTS_MAX : MT_DAT_ENTRIES_MAX;
    if (d->left > max)
        return bad(r, "too many items in one record", err);
    if (type == MT_DAT_REC_EVENTS2 && mt_dat_start_events2(r, d, err))
        return MT_E_CORRUPT;
    d->tid = (uint32_t)tid;
    r->in_rec = d->left > 0;
    return r->in_rec ? mt_dat_decode_item(r, ev, err) : MT_E_EMPTY;
}

mt_errc mt_dat_decode(mt_dat_reader *r, uint64_t type, mt_dcur c, mt_dat_event *ev, mt_err *err)
{
    if (!r->have_process && type != MT_DAT_REC_PROCESS)
        return bad(r, "the recording does not start with a PROCESS record", err);
    switch (type) {
    case MT_DAT_REC_PROCESS:
        return dec_process(r, &c, ev, err);
    case MT_DAT_REC_MODULE:
        return dec_module(r, &c, ev, err);
    case MT_DAT_REC_MODULE_UNLOAD:
        return dec_unload(r, &c, ev, err);
    case MT_DAT_REC_TRACE:
        return dec_trace(r, &c, ev, err);
    case MT_DAT_REC_TOTALS:
        return dec_totals(r, &c, ev, err);
    case MT_DAT_REC_STATE_BEGIN:
        return dec_state_begin(r, &c, ev, err);
    case MT_DAT_REC_STATE_END:
        return dec_state_end(r, &c, ev, err);
    case MT_DAT_REC_LOST:
        return dec_lost(r, &c, ev, err);
    case MT_DAT_REC_END:
        return dec_end(r, &c, ev, err);
    case MT_DAT_REC_ALLOCATORS:
        return dec_allocators(r, &c, err);
    case MT_DAT_REC_TAG_PAIRS:
        return dec_tag_pairs(r, &c, err);
    case MT_DAT_REC_EVENTS:
    case MT_DAT_REC_EVENTS2:
    case MT_DAT_REC_TRACE_STATES:
    case MT_DAT_REC_LIVE_BLOCKS:
    case MT_DAT_REC_CULLED:
        return start_items(r, type, c, ev, err);
    default:
        r->skipped++;
        return MT_E_EMPTY;
    }
}
