/* export_pprof.c -- the pprof heap profile (`--export FILE.pb.gz` or
 * `.pprof`, the viewer's `P`, the exporter's /pprof/heap): profile.proto
 * encoded with protobuf-c, gzip-compressed.
 *
 * One Sample per trace, the JSON export's rows in the JSON's order (the
 * same mt_rows_build and --top cut), with four values: inuse_space and
 * inuse_objects (live bytes and blocks at the snapshot), alloc_space and
 * alloc_objects (everything allocated since tracking started, which
 * duration_nanos spans); inuse_space is the default.  Each sample carries
 * the trace's id as the numeric label "trace_id".  Exact, memtop counts
 * every allocation (period 1); sampled, the values are its estimates and
 * the period the sampling's mean bytes; the comments say whether the data
 * is exact, and if not, why (health.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "grow.h"
#include "gzip_out.h"
#include "health.h"
#include "pprof_build.h"
#include "rows.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

#define NVALUES 4
#define NCOMMENTS 6

typedef Perftools__Profiles__Sample mt_pp_sample;
typedef Perftools__Profiles__Label mt_pp_label;
typedef Perftools__Profiles__ValueType mt_pp_vtype;

/* Everything a profile points to besides the builder's records. */
typedef struct pp_out {
    mt_pp_builder b;
    bool bad; /* out of memory somewhere */
    mt_pp_sample *samples, **sample_ptrs;
    mt_pp_label *labels, **label_ptrs;
    int64_t *values;
    size_t *first; /* sample i's locations are loc_ids[first[i]..] */
    uint64_t *loc_ids;
    size_t nsamples, nloc_ids, loc_cap;
    mt_pp_vtype types[NVALUES], *type_ptrs[NVALUES], period_type;
    int64_t comments[NCOMMENTS];
} pp_out;

/* A string's index; out of memory sets o->bad. */
static int64_t str(pp_out *o, const char *s)
{
    int64_t i = mt_pp_string(&o->b.str, s);
    o->bad |= i < 0;
    return i < 0 ? 0 : i;
}

static void add_loc(pp_out *o, uint64_t id)
{
    if (!id || mt_grow((void **)&o->loc_ids, &o->loc_cap, o->nloc_ids + 1, sizeof *o->loc_ids)) {
        o->bad = true;
        return;
    }
    o->loc_ids[o->nloc_ids++] = id;
}

/* One sample: t's counters at the locations of its frames (leaf first, as
 * the frames are), or at the pseudo location pseudo. */
static void add_sample(pp_out *o, const mt_shm_trace *t, const uint64_t *frames, unsigned n,
                       const char *pseudo, const char *label, uint64_t num)
{
    size_t i = o->nsamples++;
    mt_pp_sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
    mt_pp_label l = PERFTOOLS__PROFILES__LABEL__INIT;
    int64_t *v = o->values + NVALUES * i;
    v[0] = (int64_t)t->live_bytes;
    v[1] = (int64_t)t->live_count;
    v[2] = (int64_t)t->alloc_bytes;
    v[3] = (int64_t)t->alloc_count;
    s.n_value = NVALUES;
    s.value = v;
    l.key = str(o, label);
    l.num = (int64_t)num;
    o->labels[i] = l;
    o->label_ptrs[i] = &o->labels[i];
    s.n_label = 1;
    s.label = &o->label_ptrs[i];
    o->first[i] = o->nloc_ids;
    for (unsigned k = 0; frames && k < n; k++)
        add_loc(o, mt_pp_location_of(&o->b, frames[k], t->id));
    if (!frames || !n)
        add_loc(o, mt_pp_pseudo_location(&o->b, pseudo));
    s.n_location_id = o->nloc_ids - o->first[i];
    o->samples[i] = s;
    o->sample_ptrs[i] = &o->samples[i];
}

static void add_trace(pp_out *o, const mt_export_src *x, const mt_shm_trace *t)
{
    unsigned n;
    const uint64_t *frames = mt_defs_frames(&x->v->defs, t->id, &n);
    add_sample(o, t, frames, n, t->id == 0 && !n ? "(overflow)" : "[unknown]", "trace_id", t->id);
}

static int alloc_samples(pp_out *o, size_t n)
{
    n = n ? n : 1;
    o->samples = calloc(n, sizeof *o->samples);
    o->sample_ptrs = calloc(n, sizeof *o->sample_ptrs);
    o->labels = calloc(n, sizeof *o->labels);
    o->label_ptrs = calloc(n, sizeof *o->label_ptrs);
    o->values = calloc(n * NVALUES, sizeof *o->values);
    o->first = calloc(n, sizeof *o->first);
    return o->samples && o->sample_ptrs && o->labels && o->label_ptrs && o->values && o->first ? 0
                                                                                               : -1;
}

static void free_out(pp_out *o)
{
    mt_pp_free(&o->b);
    free(o->samples);
    free(o->sample_ptrs);
    free(o->labels);
    free(o->label_ptrs);
    free(o->values);
    free(o->first);
    free(o->loc_ids);
}

static void put_types(pp_out *o, uint64_t sample_rate, Perftools__Profiles__Profile *p)
{
    static const char *const names[NVALUES][2] = {{"inuse_space", "bytes"},
                                                  {"inuse_objects", "count"},
                                                  {"alloc_space", "bytes"},
                                                  {"alloc_objects", "count"}};
    for (unsigned i = 0; i < NVALUES; i++) {
        mt_pp_vtype t = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        t.type = str(o, names[i][0]);
        t.unit = str(o, names[i][1]);
        o->types[i] = t;
        o->type_ptrs[i] = &o->types[i];
    }
    p->n_sample_type = NVALUES;
    p->sample_type = o->type_ptrs;
    p->default_sample_type = o->types[0].type;
    mt_pp_vtype pt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    pt.type = str(o, "space");
    pt.unit = str(o, "bytes");
    o->period_type = pt;
    p->period_type = &o->period_type;
    /* exact: every allocation counted (1); sampled: the mean bytes between
     * samples, as Go's heap profiles give theirs, the values being already
     * scaled to estimates (the comments say so) */
    p->period = !sample_rate ? 1 : sample_rate > INT64_MAX ? INT64_MAX : (int64_t)sample_rate;
}

/* What the profile is and how far to trust it, as comments. */
static void put_comments(pp_out *o, const mt_export_src *x, const mt_rows_cut *cut,
                         Perftools__Profiles__Profile *p)
{
    char line[2048], health[1024];
    size_t n = 0;
    snprintf(line, sizeof line, "memtop %s heap profile of pid %d (%s), %s", MEMTOP_VERSION,
             mt_segment_pid(&x->v->seg), x->v->seg.id.exe,
             mt_export_state_word(x->state, x->v->snap.flags, x->rec));
    o->comments[n++] = str(o, line);
    mt_health_line(x->v, x->rec, health, sizeof health);
    snprintf(line, sizeof line, "data: %s",
             health[0] ? health : "exact (every allocation and free counted, not sampled)");
    o->comments[n++] = str(o, line);
    o->comments[n++] = str(o, "inuse_*: live at the snapshot; alloc_*: since tracking started "
                              "(duration_nanos); sample label trace_id: the trace's id");
    mt_staleness st = x->rec ? (mt_staleness){0} : mt_view_staleness(x->v);
    if (st.stale) { /* its last snapshot, not the present (view.h) */
        char why[160];
        mt_staleness_text(x->v, &st, why, sizeof why);
        snprintf(line, sizeof line, "not publishing: %s", why);
        o->comments[n++] = str(o, line);
    }
    if (x->rec) {
        snprintf(line, sizeof line,
                 "from recording %s at %" PRIu64 ".%09" PRIu64 " s of %" PRIu64 ".%09" PRIu64 " s",
                 x->rec->file, x->rec->cursor_ns / 1000000000u, x->rec->cursor_ns % 1000000000u,
                 x->rec->duration_ns / 1000000000u, x->rec->duration_ns % 1000000000u);
        o->comments[n++] = str(o, line);
    }
    if (cut->folded) {
        snprintf(line, sizeof line, "--top %zu: %zu more traces summed into (other)", cut->kept,
                 cut->folded);
        o->comments[n++] = str(o, line);
    }
    p->n_comment = n;
    p->comment = o->comments;
}

/* The packed profile of x in *buf (malloc'd), or -1 when out of memory. */
static int pack(const mt_export_src *x, uint8_t **buf, size_t *len)
{
    pp_out o;
    memset(&o, 0, sizeof o);
    size_t n;
    mt_row *rows = mt_rows_build(&x->v->snap, MT_SORT_LIVE, &n);
    mt_rows_cut cut;
    mt_rows_cut_at(rows, n, x->top, &cut);
    Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
    o.bad = mt_pp_init(&o.b, x->loc) != 0 || mt_pp_main_mapping(&o.b, x->v->seg.id.exe) != 0 ||
            alloc_samples(&o, cut.kept + 1) != 0;
    for (size_t i = 0; !o.bad && i < cut.kept; i++)
        add_trace(&o, x, rows[i].t);
    if (!o.bad && cut.folded)
        add_sample(&o, &cut.other, NULL, 0, "(other)", "other_traces", cut.folded);
    put_types(&o, mt_view_sample_rate(x->v), &p);
    put_comments(&o, x, &cut, &p);
    p.time_nanos = (int64_t)x->v->snap.slot.unix_ns;
    p.duration_nanos = (int64_t)x->v->snap.slot.t_ns;
    for (size_t i = 0; !o.bad && i < o.nsamples; i++)
        o.samples[i].location_id = o.loc_ids + o.first[i];
    p.n_sample = o.nsamples;
    p.sample = o.sample_ptrs;
    int rc = o.bad || mt_pp_finish(&o.b, &p) != 0 ? -1 : 0;
    if (rc == 0) {
        *len = perftools__profiles__profile__get_packed_size(&p);
        *buf = malloc(*len ? *len : 1);
        rc = *buf ? 0 : -1;
        if (*buf)
            perftools__profiles__profile__pack(&p, *buf);
    }
    free_out(&o);
    free(rows);
    return rc;
}

int mt_export_pprof(FILE *f, const mt_export_src *x)
{
    uint8_t *buf;
    size_t len;
    if (pack(x, &buf, &len) != 0) {
        errno = ENOMEM;
        return -1;
    }
    int rc = mt_gzip_write(f, buf, len);
    free(buf);
    return rc;
}
