/* caller_labels.h -- telling apart rows that show the same location.
 *
 * A row is named by its trace's location (mt_trace_location): a helper
 * called from two places makes two rows "make_label (util.c:12)" that a
 * reader cannot tell apart.  For the rows shown together whose labels are
 * equal, and for them only (the only extra symbolizing), this finds the
 * callers out from the location that tell each one apart:
 * "make_label (util.c:12) <- parse_config (config.c:88)".  Callers are the
 * source frames (inlined ones included) past the location that are not
 * allocator plumbing; each colliding row's depth is how many of them,
 * innermost first, make a path no other row of its label has: 1 when a
 * helper has two callers, more when callers share a function and line
 * (a shared intermediate, a recursion). */
#ifndef MEMTOP_CALLER_LABELS_H
#define MEMTOP_CALLER_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "location.h"

#define MT_CALLER_DEPTH 16 /* callers compared per row */
#define MT_CALLER_MAX 256  /* bytes of a caller's text */

typedef struct mt_caller_row {
    const uint64_t *frames; /* the trace's machine frames, innermost first; */
    unsigned n;             /* 0: no frames, never told apart */
    const char *label;      /* its location label (e.g. mt_frame_short) */
    uint32_t id;            /* the trace's id (the viewer asks its callers by id) */
    /* out: how many callers tell it apart (0: no other row shares its
     * label, or its first MT_CALLER_DEPTH callers do not tell it apart) */
    unsigned depth;
} mt_caller_row;

/* The callers of row r past its location, innermost first, as
 * mt_frame_short texts into out[0..max); returns how many. */
typedef unsigned (*mt_callers_fn)(void *ctx, const mt_caller_row *r, char (*out)[MT_CALLER_MAX],
                                  unsigned max);

/* Fills depth of rows[0..n), the callers from fn(ctx, ...) (the viewer's
 * come from the background symbolizer, mt_symworker_callers).  0, or -1
 * when out of memory (the rows are then left at depth 0). */
int mt_caller_labels_by(mt_callers_fn fn, void *ctx, mt_caller_row *rows, size_t n);

/* mt_caller_labels_by with mt_trace_callers over loc. */
int mt_caller_labels(const mt_locator *loc, mt_caller_row *rows, size_t n);

/* The trace's callers past its location, innermost first (see above), as
 * mt_frame_short texts into out[0..max); returns how many (0 when every
 * frame is plumbing: the location is then the outermost frame). */
unsigned mt_trace_callers(const mt_locator *loc, const uint64_t *frames, unsigned n,
                          char (*out)[MT_CALLER_MAX], unsigned max);

/* "label", "label <- caller", "label <- caller <- teller" or "label <-
 * caller <- ... <- teller" (teller: caller r->depth, the one that tells it
 * apart; utf8: "\u2190" and "\u2026") into buf of size, the callers from
 * fn(ctx, ...); returns buf. */
char *mt_caller_label_join_by(mt_callers_fn fn, void *ctx, const mt_caller_row *r, bool utf8,
                              char *buf, size_t size);

/* A joined label made to fit a narrow LOCATION column: every frame's
 * " (file:line)" or " (module+0x...)" taken out, in place ("make_label <-
 * parse_config"), so that the callers that tell rows apart stay on screen.
 * A parenthesis with a space inside ("(anonymous namespace)") stays.
 * Returns buf. */
char *mt_caller_label_compact(char *buf);

/* The shortest label that still tells r apart, for a column where even
 * the compact one is cut: "label <- ... <- teller" (the direct caller
 * elided when it is not the teller), compacted; returns buf. */
char *mt_caller_label_teller_by(mt_callers_fn fn, void *ctx, const mt_caller_row *r, bool utf8,
                                char *buf, size_t size);

/* The arrow between a label and its callers: " \u2190 " (utf8) or " <- ". */
const char *mt_caller_arrow(bool utf8);

/* mt_caller_label_join_by with mt_trace_callers over loc. */
char *mt_caller_label_join(const mt_locator *loc, const mt_caller_row *r, bool utf8, char *buf,
                           size_t size);

#endif
