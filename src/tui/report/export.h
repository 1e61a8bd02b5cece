/* export.h -- writing one snapshot to a file, in the format named by the
 * file's extension: .json, .csv, .folded (collapsed stacks), anything else
 * text.  Every trace is written, not only the top ones. */
#ifndef MEMTOP_EXPORT_H
#define MEMTOP_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "cli_options.h"
#include "location.h"
#include "view.h"

typedef struct mt_export_src {
    const mt_view *v; /* with a snapshot */
    mt_state state;
    const mt_locator *loc;
    mt_sort_key sort; /* row order of the csv and text formats */
} mt_export_src;

/* 0, or -1 with a one-line message in err. */
int mt_export_file(const char *path, const mt_export_src *src, char *err, size_t n);

void mt_export_json(FILE *f, const mt_export_src *src);
void mt_export_csv(FILE *f, const mt_export_src *src);
void mt_export_text(FILE *f, const mt_export_src *src);
void mt_export_folded(FILE *f, const mt_export_src *src); /* export_folded.c */

#endif
