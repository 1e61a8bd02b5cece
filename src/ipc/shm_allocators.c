/* shm_allocators.c -- read and describe the allocators a target found
 * (header.allocators): validated like every other byte of the segment. */
#include "shm_allocators.h"

#include <stdio.h>
#include <string.h>

#include "shm_guard.h"
#include "text_printable.h"

#define TRIES 64

const char *mt_allocator_kind_name(unsigned kind)
{
    static const char *const names[] = {"?",        "glibc",    "jemalloc", "mimalloc",
                                        "tcmalloc", "pymalloc", "malloc"};
    return kind <= MT_ALLOC_KIND_MAX ? names[kind] : "?";
}

const char *mt_allocator_how(const mt_shm_allocator *e)
{
    if (!(e->flags & MT_ALLOC_HOOKED))
        return NULL;
    if (e->flags & MT_ALLOC_REDIRECTED)
        return "redirect";
    return e->kind == MT_ALLOC_KIND_JEMALLOC ? "hook-api" : "interposition";
}

static bool terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

mt_errc mt_allocators_check(const mt_shm_allocators *a, mt_err *err)
{
    if (a->count > MT_ALLOC_MAX || a->inexact > a->count + a->more)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: %u allocators, %u inexact", a->count,
                          a->inexact);
    uint32_t inexact = 0;
    for (uint32_t i = 0; i < a->count; i++) {
        const mt_shm_allocator *e = &a->a[i];
        if (e->kind == 0 || e->kind > MT_ALLOC_KIND_MAX) /* flags: any (mt_allocators_known) */
            return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: allocator kind %u", e->kind);
        if (!terminated(e->prefix, sizeof e->prefix) ||
            !terminated(e->version, sizeof e->version) ||
            !terminated(e->module, sizeof e->module) || !terminated(e->note, sizeof e->note))
            return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: unterminated allocator string");
        inexact += (e->flags & MT_ALLOC_INEXACT) != 0;
    }
    if (inexact > a->inexact)
        return mt_err_set(err, MT_E_CORRUPT, "corrupt segment: allocators' inexact count %u < %u",
                          a->inexact, inexact);
    return MT_OK;
}

/* A flag bit this reader does not know is one a newer target added
 * without a version bump: informational by the protocol's rule (whether
 * memtop sees an allocator is HOOKED and INEXACT, whose meaning never
 * changes without a bump), so it is cleared, not refused as corrupt.
 * The strings (terminated: mt_allocators_check) are made printable. */
void mt_allocators_known(mt_shm_allocators *a)
{
    for (uint32_t i = 0; i < a->count && i < MT_ALLOC_MAX; i++) {
        mt_shm_allocator *e = &a->a[i];
        e->flags &= MT_ALLOC_KNOWN_FLAGS;
        mt_printable(e->prefix);
        mt_printable(e->version);
        mt_printable(e->module);
        mt_printable(e->note);
    }
}

typedef struct alloc_read {
    const mt_shm_allocators *src;
    mt_shm_allocators *out;
    uint32_t seq; /* the even sequence the copy is consistent with, or odd: retry */
} alloc_read;

/* One seqlock read of the list, run under the SIGBUS guard: the file's
 * owner may cut it while we read (docs/shm-protocol.md). */
static void read_once(void *ctx)
{
    alloc_read *r = ctx;
    uint32_t s1 = __atomic_load_n(&r->src->seq, __ATOMIC_ACQUIRE);
    r->seq = 1u;
    if (s1 & 1u)
        return;
    memcpy(r->out, r->src, sizeof *r->out);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&r->src->seq, __ATOMIC_RELAXED) == s1)
        r->seq = s1;
}

mt_errc mt_segment_allocators(const mt_segment *seg, mt_shm_allocators *out, mt_err *err)
{
    alloc_read r = {&mt_segment_header(seg)->allocators, out, 1u};
    for (int i = 0; i < TRIES; i++) {
        mt_errc rc = mt_segment_guard(seg, read_once, &r, err);
        if (rc)
            return rc;
        if (r.seq & 1u)
            continue;
        out->seq = r.seq;
        if (r.seq == 0) { /* never published: an older target */
            memset(out, 0, sizeof *out);
            return MT_OK;
        }
        mt_errc crc = mt_allocators_check(out, err);
        if (crc == MT_OK)
            mt_allocators_known(out);
        return crc;
    }
    return mt_err_set(err, MT_E_BUSY, "allocator list busy");
}

void mt_allocators_inexact_text(const mt_shm_allocators *a, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = '\0';
    if (!a->inexact)
        return;
    size_t k = 0;
    const char *sep = "";
    for (uint32_t i = 0; i < a->count && k < cap; i++) {
        if (!(a->a[i].flags & MT_ALLOC_INEXACT))
            continue;
        k += (size_t)snprintf(out + k, cap - k, "%s%s", sep, a->a[i].note);
        sep = "; ";
    }
    if (a->more && k < cap && !a->count) /* a recording: counted, not named */
        snprintf(out + k, cap - k, "%u allocator%s memtop cannot see (the live view names them)",
                 a->more, a->more == 1 ? "" : "s");
    else if (a->more && k < cap)
        snprintf(out + k, cap - k, "%s%u more allocators", sep, a->more);
}

const mt_shm_allocator *mt_allocators_main(const mt_shm_allocators *a)
{
    for (uint32_t i = 0; i < a->count && i < MT_ALLOC_MAX; i++)
        if (a->a[i].flags & MT_ALLOC_STATS)
            return &a->a[i];
    return NULL;
}

void mt_allocator_name(const mt_shm_allocator *e, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s%s", mt_allocator_kind_name(e->kind), e->version[0] ? " " : "",
             e->version, e->flags & MT_ALLOC_STATIC ? " (static)" : "");
}
