/* replay_export.c -- a recording's provenance for its exports (see
 * replay_export.h). */
#include "replay_export.h"

#include <string.h>

#include "dat_format.h"

static const char *reason_name(const mt_replay_info *in)
{
    if (!in->finalized)
        return NULL;
    switch (in->end_reason) {
    case MT_DAT_END_STOP:
        return "stopped";
    case MT_DAT_END_EXIT:
        return "exited";
    case MT_DAT_END_EXEC:
        return "exec";
    case MT_DAT_END_ERROR:
        return mt_replay_disk_full(in) ? "disk_full" : "write_error";
    case MT_DAT_END_LEASE:
        return "lease_expired";
    default:
        return "unknown";
    }
}

void mt_replay_export_rec(const mt_replay *r, mt_export_rec *out)
{
    const mt_replay_info *in = mt_replay_get_info(r);
    memset(out, 0, sizeof *out);
    out->file = in->path;
    uint64_t end = in->duration_ns > in->start_ns ? in->duration_ns : in->start_ns;
    uint64_t cur = mt_replay_at_end(r) ? end : mt_replay_cursor(r);
    out->cursor_ns = cur > in->start_ns ? cur - in->start_ns : 0;
    out->duration_ns = end - in->start_ns;
    out->finalized = in->finalized;
    out->end_reason = reason_name(in);
    out->truncated = in->truncated;
    out->invalid_tail = in->invalid_tail;
    out->truncated_bytes = in->dropped_bytes;
    out->events_dropped = mt_replay_dropped(in);
    uint64_t said = 0;
    for (unsigned i = 0; i < MT_DAT_LOST_WHY_N; i++) {
        out->dropped_why[i] = in->lost_why[i];
        said += in->lost_why[i];
    }
    if (out->events_dropped > said) /* counted by TOTALS or END, no LOST record read */
        out->dropped_why[MT_DAT_LOST_NOT_SAID] += out->events_dropped - said;
    out->inexact_start = in->inexact_start;
    out->cull_ms = in->culled ? in->cull_ms : 0;
    out->tick_order = in->tick_order;
    uint64_t from, to;
    if (mt_replay_silent(r, &from, &to)) {
        out->silent = true;
        out->silent_from_ns = from > in->start_ns ? from - in->start_ns : 0;
        out->silent_to_ns = to > in->start_ns ? to - in->start_ns : 0;
    }
}
