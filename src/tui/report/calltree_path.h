/* calltree_path.h -- one trace's call path for the call tree: its source
 * frames (inlined ones included), outermost first, down to its location
 * (the first frame that is not allocator plumbing, as mt_trace_location
 * picks it), each named by function, else module+offset, else address. */
#ifndef MEMTOP_MODEL_CALLTREE_PATH_H
#define MEMTOP_MODEL_CALLTREE_PATH_H

#include "calltree.h"
#include "location.h"

#define MT_CT_MAX_PATH 512 /* source frames per path; deeper: the outermost are left out */

/* The source frames of one address, innermost first (mt_locate_all, or the
 * background symbolizer's mt_symworker_frames); returns 1..max. */
typedef unsigned (*mt_chain_fn)(void *ctx, uint64_t addr, mt_frame *out, unsigned max);

/* Scratch for one path at a time (~110 KiB: allocate it). */
typedef struct mt_ct_pathbuf {
    mt_frame fr[MT_CT_MAX_PATH + MT_MAX_CHAIN];
    mt_ct_frame out[MT_CT_MAX_PATH];
    char names[MT_CT_MAX_PATH][96]; /* names formatted for frames without a function */
} mt_ct_pathbuf;

/* The path of the trace with machine frames[0..n) (innermost first) into
 * pb; *out points into pb until its next use.  skip: plumbing, or NULL. */
unsigned mt_ct_path_make(mt_ct_pathbuf *pb, const uint64_t *frames, unsigned n, mt_chain_fn chain,
                         void *ctx, const mt_plumbing *skip, const mt_ct_frame **out);

/* mt_locate_all as an mt_chain_fn (ctx: the mt_locator). */
unsigned mt_ct_locate_chain(void *ctx, uint64_t addr, mt_frame *out, unsigned max);

#endif
