/* metrics_text.h -- the exporter's /metrics body: every process of the
 * fleet table in the Prometheus text format 0.0.4, or in OpenMetrics 1.0
 * when the scraper asks for it (the same samples; counters' families are
 * then named without _total, and the body ends with "# EOF").
 *
 * Per process, labelled pid, exe and container: live bytes and blocks,
 * allocator-held bytes, RSS, allocation and free counters (rates are
 * rate() of these) and memtop's own rates, growth, the health counters and
 * whether the data is exact.  Per process too, its top traces by leak
 * score (then live bytes; memtop --batch -s leak's order), labelled
 * trace_id and location (site_label.h: short, at most 120 bytes): live
 * bytes and blocks, growth and leak score.
 * Cardinality is bounded by the fleet table's limit times top. */
#ifndef MEMTOP_METRICS_TEXT_H
#define MEMTOP_METRICS_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "fleet_procs.h"

#define MT_METRICS_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define MT_METRICS_OM_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Write the body for f's processes, top traces each. */
void mt_metrics_write(FILE *out, const mt_fleet *f, long top, bool openmetrics);

#endif
