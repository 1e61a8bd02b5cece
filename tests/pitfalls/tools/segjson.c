/* segjson.c -- print a copied-out snapshot as JSON in the shape of
 * `memtop --export x.json` (a subset plus raw header fields), so the test
 * drivers check either source with the same code.
 */
#include "segjson.h"

#include <stdio.h>

static void put_str(FILE *f, const char *s, size_t cap)
{
    fputc('"', f);
    for (size_t i = 0; i < cap && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_totals(FILE *f, const mt_shm_totals *t)
{
    fprintf(f,
            "\"totals\":{\"live_bytes\":%lu,\"live_count\":%lu,\"alloc_count\":%lu,"
            "\"alloc_bytes\":%lu,\"free_count\":%lu,\"free_bytes\":%lu,"
            "\"temporary_count\":%lu,\"temporary_bytes\":%lu,\"peak_live_bytes\":%lu,"
            "\"unknown_free_count\":%lu,\"untracked_alloc_count\":%lu,"
            "\"missed_free_count\":%lu,\"dropped_traces\":%lu,\"trace_count\":%lu,"
            "\"thread_count\":%lu,\"allocator_bytes\":",
            t->live_bytes, t->live_count, t->alloc_count, t->alloc_bytes, t->free_count,
            t->free_bytes, t->temporary_count, t->temporary_bytes, t->peak_live_bytes,
            t->unknown_free_count, t->untracked_alloc_count, t->missed_free_count,
            t->dropped_traces, t->trace_count, t->thread_count);
    if (t->allocator_bytes == MT_UNKNOWN) /* the allocator's own figure, if known */
        fputs("null}", f);
    else
        fprintf(f, "%lu}", t->allocator_bytes);
}

static void put_frames(FILE *f, const mtp_seg *seg, const mt_shm_def *d)
{
    const uint64_t *ips = (const uint64_t *)(d + 1);
    fputs("\"frames\":[", f);
    for (unsigned i = 0; i < d->nframes; i++) {
        const mt_shm_module *m = mtp_seg_module(seg, ips[i]);
        fprintf(f, "%s{\"address\":\"0x%lx\",\"module\":", i ? "," : "", ips[i]);
        if (m) {
            put_str(f, m->path, sizeof m->path);
            fprintf(f, ",\"offset\":\"0x%lx\"}", ips[i] - m->bias);
        } else {
            fputs("null,\"offset\":null}", f);
        }
    }
    fputc(']', f);
}

static void put_trace(FILE *f, const mtp_seg *seg, const mtp_snap *s, const mt_shm_trace *t)
{
    fprintf(f,
            "{\"id\":%u,\"alloc_count\":%lu,\"alloc_bytes\":%lu,\"free_count\":%lu,"
            "\"free_bytes\":%lu,\"live_count\":%lu,\"live_bytes\":%lu,"
            "\"peak_live_bytes\":%lu,\"temporary_count\":%lu,\"temporary_bytes\":%lu,",
            t->id, t->alloc_count, t->alloc_bytes, t->free_count, t->free_bytes, t->live_count,
            t->live_bytes, t->peak_live_bytes, t->temporary_count, t->temporary_bytes);
    put_frames(f, seg, mtp_seg_def(seg, s, t->id));
    fputc('}', f);
}

void mtp_put_json(FILE *f, const mtp_seg *seg, const mtp_snap *s)
{
    const mt_shm_header *h = seg->hdr;
    uint32_t flags = __atomic_load_n(&h->flags, __ATOMIC_ACQUIRE);
    fprintf(f, "{\"source\":\"segment\",\"pid\":%d,\"ppid\":%d,\"flags\":%u,", h->pid, h->ppid,
            flags);
    fprintf(f, "\"exited\":%s,\"fork_child\":%s,", (flags & MT_FLAG_EXITED) ? "true" : "false",
            (flags & MT_FLAG_FORK_CHILD) ? "true" : "false");
    fprintf(f, "\"publish_count\":%lu,\"max_depth\":%u,\"interval_ms\":%u,\"temporary_ns\":%lu,",
            mtp_load_acq(&h->publish_count), h->max_depth, h->publish_interval_ms, h->temporary_ns);
    fputs("\"exe\":", f);
    put_str(f, h->exe, sizeof h->exe);
    fputs(",\"cmdline\":", f);
    put_str(f, h->cmdline, sizeof h->cmdline);
    fprintf(f, ",\"ntraces\":%lu,", s->slot.ntraces);
    put_totals(f, &s->slot.totals);
    fputs(",\"traces\":[", f);
    for (uint64_t i = 0; i < s->slot.ntraces; i++) {
        if (i)
            fputc(',', f);
        put_trace(f, seg, s, &s->traces[i]);
    }
    fputs("]}\n", f);
}
