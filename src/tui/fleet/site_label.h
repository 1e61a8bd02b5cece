/* site_label.h -- the `location` label of /metrics' per-trace series: the
 * site the frame views show, made short enough for a Prometheus label.
 *
 * A C++ site's demangled name runs to hundreds of bytes (every template
 * argument spelled out, then the parameter list), and label values that
 * long break dashboards, legends and cardinality tools.  The label keeps
 * what tells sites apart -- the qualified name and the file:line -- and
 * drops what does not: template and generic arguments become "<...>", the
 * C++ parameter list (with what follows it: const, [clone .cold]) goes.
 * The value is valid UTF-8 and at most MT_SITE_LABEL_MAX bytes; a longer
 * one is cut at a character boundary and the cut marked with U+2026 "…",
 * the function cut first so that " (file:line)" stays.  Two traces may
 * share a label (one site, two call paths, or overloads on one line); the
 * series stay apart by their trace_id label. */
#ifndef MEMTOP_SITE_LABEL_H
#define MEMTOP_SITE_LABEL_H

#include <stddef.h>

#include "location.h"

#define MT_SITE_LABEL_MAX 120 /* bytes of the label value (before escaping) */

/* name (demangled C++ or Rust) with template and generic argument lists
 * elided to "<...>" (Rust's <T as Trait> qualified paths kept, their own
 * arguments elided) and the C++ parameter list dropped, into buf (cut at
 * n - 1 bytes). */
char *mt_name_brief(const char *name, char *buf, size_t n);

/* The label value of frame f: mt_frame_short's form with the brief name,
 * as above.  n must be more than MT_SITE_LABEL_MAX. */
char *mt_site_label(const mt_frame *f, char *buf, size_t n);

#endif
