/* cmd_batch.c -- printing batch reports and writing exports (see
 * cmd_batch.h). */
#include "cmd_batch.h"

#include <stdio.h>

#include "commands.h"
#include "export.h"
#include "format.h"
#include "health.h"
#include "report.h"
#include "wrapper_shape.h"

void mt_batch_report(const mt_view *v, mt_state st, const mt_opts *o, const mt_locator *base)
{
    mt_addr_set set;
    mt_locator shaped = mt_wrapper_locator(base, &v->defs, &v->snap, &set), *loc = &shaped;
    mt_report_header(stdout, v, st, NULL);
    if (o->tree) {
        mt_export_src src = {v, st, loc, o->sort, NULL, 0, o->reverse, (double)o->threshold};
        mt_export_tree_text(stdout, &src);
    } else {
        mt_report_rows(stdout, v, loc, o->sort, o->group, o->top);
    }
    fputc('\n', stdout);
    fflush(stdout);
    mt_addr_set_free(&set);
}

/* The export message's word for the process: a recording's state at the
 * cursor ("stopped" inside a stop); a live target that does not publish
 * (stopped, traced, hung) as /proc says, with its snapshot's age (not
 * "running": the snapshot is not of now). */
static const char *state_text(const mt_view *v, mt_state st, const mt_export_rec *rec, char *buf,
                              size_t n)
{
    if (rec)
        return mt_export_state_word(st, v->snap.flags, rec);
    mt_staleness s = mt_view_staleness(v);
    bool halted = s.proc_state == 'T' || s.proc_state == 't';
    if (st != MT_STATE_RUNNING || !(s.stale || halted))
        return mt_state_label(st, v->snap.flags);
    snprintf(buf, n, "%s, snapshot %llu s old", mt_staleness_why(&s),
             (unsigned long long)(s.age_ns / 1000000000u));
    return buf;
}

int mt_batch_export(const mt_view *v, mt_state st, const mt_opts *o, const mt_locator *base,
                    const mt_export_rec *rec)
{
    mt_addr_set set;
    mt_locator loc = mt_wrapper_locator(base, &v->defs, &v->snap, &set);
    mt_export_src src = {
        v, st, &loc, o->sort, rec, o->top_given ? o->top : 0, o->reverse, (double)o->threshold};
    char err[600], live[32], word[96];
    int wrote = mt_export_file(o->export_path, &src, err, sizeof err);
    mt_addr_set_free(&set);
    if (wrote != 0) {
        mt_errorf("%s", err);
        return MT_EXIT_FAIL;
    }
    const mt_shm_slot *s = &v->snap.slot;
    char smp[48]; /* every format, CSV too: say that the figures are estimates */
    mt_fmt_sampling(mt_view_sample_rate(v), smp, sizeof smp);
    mt_errorf("wrote %s: snapshot #%llu of pid %d (%s), %llu trace%s, %s%s live%s%s%s",
              mt_export_stdout(o->export_path) ? "standard output" : o->export_path,
              (unsigned long long)s->publish_seq, mt_segment_pid(&v->seg),
              state_text(v, st, rec, word, sizeof word), (unsigned long long)s->ntraces,
              mt_plural(s->ntraces), mt_est_mark(mt_view_sample_rate(v)),
              mt_fmt_bytes(s->totals.live_bytes, live, sizeof live), smp[0] ? " (" : "", smp,
              smp[0] ? ": estimates)" : "");
    char why[1024];
    mt_health_line(v, rec, why, sizeof why);
    if (why[0] && o->strict) {
        mt_errorf("--strict: the data is %s", why);
        return MT_EXIT_INEXACT;
    }
    return MT_EXIT_OK;
}
