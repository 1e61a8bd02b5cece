/* metrics_text.c -- the /metrics body (see metrics_text.h).  The text
 * formats want every sample of a family together under one HELP and TYPE,
 * so each process's figures are computed once (calc) and the families are
 * then written one after the other over all processes. */
#include "metrics_text.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "health.h"
#include "json_escape.h"
#include "rows.h"
#include "shm_recording.h"
#include "site_label.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

/* One process's labels and figures, computed once per body. */
typedef struct calc {
    const mt_fleet_proc *p;
    char labels[1024];  /* pid="1",exe="...",container="..." */
    mt_row *rows;       /* every trace, by leak score */
    size_t nrows, ntop; /* rows[0..ntop) are exported */
    char (*top)[2200];  /* labels of rows[i], trace_id and location added */
    double growth;      /* live bytes per second, all traces */
    bool exact;
    mt_staleness stale; /* view.h: while stale, no rates (they would be the last ones) */
    bool have_rec;      /* the recording status read: rec_dropped holds its drops by cause */
    uint64_t rec_dropped[MT_DAT_LOST_WHY_N];
    bool rec_on, rec_held; /* a recording runs; a viewer holds it (its lease) */
    uint64_t rec_bytes;    /* its bytes so far */
} calc;

typedef struct value {
    bool known, integer;
    uint64_t u;
    double d;
} value;

static value u64v(uint64_t u)
{
    return (value){u != MT_UNKNOWN, true, u, 0};
}

static value dblv(double d)
{
    return (value){true, false, 0, d};
}

/* s as a label value into buf, cut at n: \\ \" \n escaped, and bytes that
 * are not UTF-8 (which would fail the whole scrape) U+FFFD, as in JSON. */
static void escape(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (p && *p && k + 5 < n) {
        int len = mt_utf8_len(p);
        if (len == 0) {
            memcpy(buf + k, "\xEF\xBF\xBD", 3);
            k += 3;
            p++;
            continue;
        }
        if (*p == '\\' || *p == '"' || *p == '\n')
            buf[k++] = '\\';
        buf[k++] = *p == '\n' ? 'n' : (char)*p;
        for (int i = 1; i < len; i++)
            buf[k++] = (char)p[i];
        p += len;
    }
    buf[k] = '\0';
}

static void put_value(FILE *f, value v)
{
    if (v.integer) {
        fprintf(f, "%" PRIu64 "\n", v.u);
        return;
    }
    if (isnan(v.d)) {
        fputs("NaN\n", f);
        return;
    }
    if (isinf(v.d)) {
        fputs(v.d > 0 ? "+Inf\n" : "-Inf\n", f);
        return;
    }
    char num[400];
    fprintf(f, "%s\n", mt_fmt_fixed(v.d, 6, num, sizeof num));
}

typedef struct family {
    const char *name; /* without _total */
    bool counter;
    const char *help;
} family;

static void put_family(FILE *f, const family *fam, bool om)
{
    const char *sfx = fam->counter && !om ? "_total" : "";
    fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", fam->name, sfx, fam->help, fam->name, sfx,
            fam->counter ? "counter" : "gauge");
}

static void put_sample(FILE *f, const family *fam, const char *labels, value v)
{
    if (!v.known)
        return;
    fprintf(f, "%s%s{%s} ", fam->name, fam->counter ? "_total" : "", labels);
    put_value(f, v);
}

/* Not while the process publishes nothing: its window's growth is its
 * last (a growth alert would go on firing for a stopped process). */
static value growth_of(const calc *c)
{
    return c->stale.stale ? (value){0} : dblv(c->growth);
}

static value sample_of(const calc *c)
{
    return u64v(mt_view_sample_rate(&c->p->v));
}

static value exact_of(const calc *c)
{
    return u64v(c->exact);
}

static value table_full_of(const calc *c)
{
    return u64v((c->p->v.snap.flags & MT_FLAG_TRACES_FULL) != 0);
}

static value segment_of(const calc *c)
{
    uint64_t b = c->p->v.segment_bytes;
    return b == MT_UNKNOWN ? (value){0} : u64v(b);
}

static value uptime_of(const calc *c)
{
    return u64v(mt_view_uptime_s(&c->p->v));
}

static value allocator_age_of(const calc *c)
{
    uint64_t age = mt_snapshot_allocator_age_ns(&c->p->v.snap);
    return age == MT_UNKNOWN ? u64v(age) : dblv((double)age / 1e9); /* no figures: no age */
}

static value time_of(const calc *c)
{
    return dblv((double)c->p->v.snap.slot.unix_ns / 1e9);
}

static value age_of(const calc *c)
{
    return dblv((double)c->stale.age_ns / 1e9);
}

static value publishing_of(const calc *c)
{
    return u64v(!c->stale.stale);
}

#define TOTAL(field) false, offsetof(mt_shm_totals, field), NULL
#define RATE(field) true, offsetof(mt_rates, field), NULL
#define CALC(fn) false, 0, fn

/* Per-process families: a field of the totals (uint64_t), one of the
 * view's rates (double, while valid and the snapshot not stale), or
 * computed. */
static const struct pmetric {
    family fam;
    bool rate;
    size_t off;
    value (*get)(const calc *c);
} pmetrics[] = {
    {{"memtop_live_bytes", false, "Bytes allocated and not freed yet (the live heap)."},
     TOTAL(live_bytes)},
    {{"memtop_live_blocks", false, "Blocks allocated and not freed yet."}, TOTAL(live_count)},
    {{"memtop_peak_live_bytes", false, "Highest live bytes since tracking started."},
     TOTAL(peak_live_bytes)},
    {{"memtop_allocator_bytes", false, "Bytes the allocator holds from the kernel."},
     TOTAL(allocator_bytes)},
    {{"memtop_allocator_inuse_bytes", false, "Bytes in use as the allocator counts them."},
     TOTAL(allocator_inuse_bytes)},
    {{"memtop_allocator_age_seconds", false,
      "How old the two allocator figures are (glibc's are taken at a pace: its statistics "
      "hold the allocator while they run)."},
     CALC(allocator_age_of)},
    {{"memtop_rss_bytes", false, "Resident memory of the process."}, TOTAL(rss_bytes)},
    {{"memtop_tracker_bytes", false,
      "memtop's own bookkeeping memory in the process (memtop_segment_bytes apart)."},
     TOTAL(tracker_bytes)},
    {{"memtop_segment_bytes", false,
      "Memory memtop's shared segment holds (its file's allocated blocks; on /dev/shm, RAM): "
      "memtop's cost in the process beside memtop_tracker_bytes."},
     CALC(segment_of)},
    {{"memtop_traces", false, "Distinct allocation backtraces seen."}, TOTAL(trace_count)},
    {{"memtop_growth_bytes_per_second", false,
      "Change of live bytes per second over memtop's growth window (30-36 s)."},
     CALC(growth_of)},
    {{"memtop_allocations_per_second", false,
      "Allocations per second over the last second or more (a publish interval if longer); "
      "over the whole life of a process younger than that."},
     RATE(allocs_per_s)},
    {{"memtop_allocated_bytes_per_second", false,
      "Bytes allocated per second over the last second or more (as "
      "memtop_allocations_per_second)."},
     RATE(alloc_bytes_per_s)},
    {{"memtop_frees_per_second", false,
      "Frees per second over the last second or more (as memtop_allocations_per_second)."},
     RATE(frees_per_s)},
    {{"memtop_allocations", true, "Allocations since tracking started."}, TOTAL(alloc_count)},
    {{"memtop_allocated_bytes", true, "Bytes allocated since tracking started."},
     TOTAL(alloc_bytes)},
    {{"memtop_frees", true, "Frees since tracking started."}, TOTAL(free_count)},
    {{"memtop_freed_bytes", true, "Bytes freed since tracking started."}, TOTAL(free_bytes)},
    {{"memtop_temporary_allocations", true,
      "Allocations freed within MEMTOP_TEMP_MS of being made."},
     TOTAL(temporary_count)},
    {{"memtop_unknown_frees", true, "Frees of blocks memtop never saw allocated."},
     TOTAL(unknown_free_count)},
    {{"memtop_untracked_allocations", true, "Allocations made where tracking was not possible."},
     TOTAL(untracked_alloc_count)},
    {{"memtop_missed_frees", true, "Blocks whose free was not seen."}, TOTAL(missed_free_count)},
    {{"memtop_dropped_traces", true, "Traces not published (segment full), folded into one."},
     TOTAL(dropped_traces)},
    {{"memtop_sample_bytes", false,
      "Mean bytes between samples when the process is sampled (MEMTOP_SAMPLE: its figures are "
      "estimates, memtop_data_exact 0); 0 when every allocation is counted."},
     CALC(sample_of)},
    {{"memtop_trace_table_full", false,
      "1 when the trace table reached its bound (MEMTOP_MAX_TRACES): backtraces seen since are "
      "counted in one overflow trace, not their own (totals stay exact; memtop_data_exact 0)."},
     CALC(table_full_of)},
    {{"memtop_data_exact", false,
      "1 when every figure is exact, 0 when memtop could not see everything (memtop_* "
      "health counters, an allocator it does not hook, a full trace table)."},
     CALC(exact_of)},
    {{"memtop_uptime_seconds", false, "Seconds the process has run."}, CALC(uptime_of)},
    {{"memtop_snapshot_timestamp_seconds", false, "When the snapshot was published (Unix time)."},
     CALC(time_of)},
    {{"memtop_snapshot_age_seconds", false,
      "How old the snapshot is: about one publish interval while the process publishes."},
     CALC(age_of)},
    {{"memtop_publishing", false,
      "0 when the running process published nothing for 3 intervals and at least 3 s "
      "(stopped, traced or hung): its rates and growth are then absent, its other figures "
      "its last; else 1."},
     CALC(publishing_of)},
};

static value pmetric_value(const struct pmetric *m, const calc *c)
{
    if (m->get)
        return m->get(c);
    if (m->rate) {
        const mt_rates *r = &c->p->v.rates;
        double d;
        memcpy(&d, (const char *)r + m->off, sizeof d);
        return r->valid && !c->stale.stale ? dblv(d) : (value){0};
    }
    uint64_t u;
    memcpy(&u, (const char *)&c->p->v.snap.slot.totals + m->off, sizeof u);
    return u64v(u);
}

/* Per-trace families, over each process's top rows. */
enum { T_LIVE, T_BLOCKS, T_GROWTH, T_LEAK, T_FAMILIES };
static const family tfams[T_FAMILIES] = {
    {"memtop_trace_live_bytes", false, "Live bytes of one of the process's top traces."},
    {"memtop_trace_live_blocks", false, "Live blocks of one of the process's top traces."},
    {"memtop_trace_growth_bytes_per_second", false,
     "Change of the trace's live bytes per second over memtop's growth window."},
    {"memtop_trace_leak_score", false,
     "Leak suspicion 0-100 (docs/leak-score.md), from the segment's checkpoints."},
};

static value tvalue(int fam, const mt_row *r, bool stale)
{
    switch (fam) {
    case T_LIVE:
        return u64v(r->t->live_bytes);
    case T_BLOCKS:
        return u64v(r->t->live_count);
    case T_GROWTH: /* as growth_of */
        return stale ? (value){0} : dblv(r->growth);
    default:
        return dblv(r->key); /* rows by MT_SORT_LEAK: the score */
    }
}

/* The location label of row r: the site the frame views show (JSON's
 * "location"), made short (site_label.h). */
static void location_of(const mt_fleet_proc *p, const mt_row *r, char *buf, size_t n)
{
    unsigned nf;
    const uint64_t *frames = mt_defs_frames(&p->v.defs, r->t->id, &nf);
    if (!frames || !nf) {
        snprintf(buf, n, "%s", r->t->id == 0 ? "(overflow)" : "[unknown]");
        return;
    }
    mt_frame fr;
    mt_locator at = mt_locator_at(&p->loc, r->t->id);
    mt_trace_location(&at, frames, nf, &fr);
    mt_site_label(&fr, buf, n);
}

static void calc_top(calc *c, long top)
{
    c->ntop = top > 0 && (size_t)top < c->nrows ? (size_t)top : c->nrows;
    c->top = c->ntop ? calloc(c->ntop, sizeof *c->top) : NULL;
    if (!c->top) {
        c->ntop = 0;
        return;
    }
    for (size_t i = 0; i < c->ntop; i++) {
        char where[1024], esc[1100];
        location_of(c->p, &c->rows[i], where, sizeof where);
        escape(where, esc, sizeof esc);
        snprintf(c->top[i], sizeof c->top[i], "%s,trace_id=\"%u\",location=\"%s\"", c->labels,
                 c->rows[i].t->id, esc);
    }
}

static void calc_init(calc *c, const mt_fleet_proc *p, long top)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    char exe[600], cont[300];
    escape(p->v.seg.id.exe, exe, sizeof exe);
    escape(p->container, cont, sizeof cont);
    snprintf(c->labels, sizeof c->labels, "pid=\"%d\",exe=\"%s\",container=\"%s\"", p->pid, exe,
             cont);
    c->exact = mt_health_exact(&p->v, NULL);
    c->stale = mt_view_staleness(&p->v);
    mt_shm_recording rec;
    uint64_t why[MT_REC_WHY_MAX];
    mt_err err;
    /* No series when the status is not known (no stable read): never a torn set. */
    mt_rec_lease_info lease;
    c->have_rec = mt_segment_recording_lease(&p->v.seg, &rec, why, &lease, &err) == MT_OK;
    if (c->have_rec)
        mt_recording_dropped_why(&rec, why, c->rec_dropped);
    c->rec_on = c->have_rec && rec.state == MT_REC_STATE_ON;
    c->rec_held = c->rec_on && lease.ms != 0;
    c->rec_bytes = c->rec_on ? rec.bytes_written : 0;
    c->rows = mt_rows_build(&p->v.snap, MT_SORT_LEAK, &c->nrows);
    for (size_t i = 0; i < c->nrows; i++)
        c->growth += c->rows[i].growth;
    calc_top(c, top);
}

static void put_exporter(FILE *out, const mt_fleet *f, bool om)
{
    static const family procs = {"memtop_exporter_processes", false,
                                 "Processes with libmemtop.so the exporter found, by what it "
                                 "did with them."};
    put_family(out, &procs, om);
    fprintf(out, "memtop_exporter_processes{state=\"exported\"} %zu\n", f->count);
    fprintf(out, "memtop_exporter_processes{state=\"starting\"} %zu\n", f->starting);
    fprintf(out, "memtop_exporter_processes{state=\"too_young\"} %zu\n", f->too_young);
    fprintf(out, "memtop_exporter_processes{state=\"denied\"} %zu\n", f->denied);
    fprintf(out, "memtop_exporter_processes{state=\"not_running\"} %zu\n", f->not_running);
    fprintf(out, "memtop_exporter_processes{state=\"over_limit\"} %zu\n", f->skipped);
    fprintf(out, "memtop_exporter_processes{state=\"error\"} %zu\n", f->errors);
    static const family info = {"memtop_exporter_build_info", false, "memtop's version (value 1)."};
    put_family(out, &info, om);
    fprintf(out, "memtop_exporter_build_info{version=\"%s\"} 1\n", MEMTOP_VERSION);
}

/* A recording's dropped events by cause (dat_lost.h keys), for every
 * process whose recording status could be read: 0s when it never dropped
 * or never recorded.  A gauge: a new recording starts again from 0. */
static void put_rec_dropped(FILE *out, const calc *cs, size_t n, bool om)
{
    static const family fam = {"memtop_recording_dropped_events", false,
                               "Events the process's current or last recording could not write, "
                               "by cause (not_recorded: a target that does not say)."};
    if (!n)
        return;
    put_family(out, &fam, om);
    for (size_t i = 0; i < n; i++) {
        if (!cs[i].have_rec)
            continue;
        for (unsigned k = 0; k < MT_DAT_LOST_WHY_N; k++) {
            char labels[sizeof cs[i].labels + 64];
            snprintf(labels, sizeof labels, "%s,cause=\"%s\"", cs[i].labels, mt_dat_lost_key(k));
            put_sample(out, &fam, labels, u64v(cs[i].rec_dropped[k]));
        }
    }
}

/* Whether a recording runs (1) or not (0), with held_by_viewer: a
 * viewer's lease holds it (it stops when that viewer is gone) or nothing
 * does (MEMTOP_RECORD, an older viewer: it runs until stopped); and its
 * bytes so far.  For every process whose recording status could be read. */
static void put_rec_active(FILE *out, const calc *cs, size_t n, bool om)
{
    static const family on = {"memtop_recording_active", false,
                              "1 while a recording runs in the process (held_by_viewer: it stops "
                              "when the viewer that started it is gone), else 0."};
    static const family bytes = {"memtop_recording_bytes", false,
                                 "Bytes the running recording has written so far (0: none runs)."};
    if (!n)
        return;
    put_family(out, &on, om);
    for (size_t i = 0; i < n; i++) {
        char labels[sizeof cs[i].labels + 32];
        snprintf(labels, sizeof labels, "%s,held_by_viewer=\"%s\"", cs[i].labels,
                 cs[i].rec_held ? "true" : "false");
        if (cs[i].have_rec)
            put_sample(out, &on, labels, u64v(cs[i].rec_on));
    }
    put_family(out, &bytes, om);
    for (size_t i = 0; i < n; i++)
        if (cs[i].have_rec)
            put_sample(out, &bytes, cs[i].labels, u64v(cs[i].rec_bytes));
}

void mt_metrics_write(FILE *out, const mt_fleet *f, long top, bool om)
{
    calc *cs = f->count ? calloc(f->count, sizeof *cs) : NULL;
    size_t n = cs ? f->count : 0;
    for (size_t i = 0; i < n; i++)
        calc_init(&cs[i], f->procs[i], top);
    put_exporter(out, f, om);
    for (size_t m = 0; n && m < sizeof pmetrics / sizeof pmetrics[0]; m++) {
        put_family(out, &pmetrics[m].fam, om);
        for (size_t i = 0; i < n; i++)
            put_sample(out, &pmetrics[m].fam, cs[i].labels, pmetric_value(&pmetrics[m], &cs[i]));
    }
    put_rec_dropped(out, cs, n, om);
    put_rec_active(out, cs, n, om);
    for (int t = 0; n && t < T_FAMILIES; t++) {
        put_family(out, &tfams[t], om);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < cs[i].ntop; k++)
                put_sample(out, &tfams[t], cs[i].top[k],
                           tvalue(t, &cs[i].rows[k], cs[i].stale.stale));
    }
    if (om)
        fputs("# EOF\n", out);
    for (size_t i = 0; i < n; i++) {
        free(cs[i].rows);
        free(cs[i].top);
    }
    free(cs);
}
