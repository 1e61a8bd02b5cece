/* model_fixture.h -- in-memory snapshots and a namer for the table model's
 * tests (no segment needed). */
#ifndef MEMTOP_TEST_MODEL_FIXTURE_H
#define MEMTOP_TEST_MODEL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

/* A snapshot of n zeroed traces with ids 0..n-1 at t_s seconds. */
mt_snapshot *fx_snap(size_t n, double t_s);
void fx_snap_free(mt_snapshot *s);

/* Sets a trace's counters (live = alloc - free, both counts and bytes). */
void fx_trace(mt_snapshot *s, size_t i, uint64_t allocs, uint64_t alloc_bytes, uint64_t frees,
              uint64_t free_bytes);

/* Names: per trace id, function / file / module from these tables
 * (id % count); TRACE: "function (file:<id>)".  As mt_namer requires, a
 * returned string stays valid until the next call for the same id: the
 * table strings themselves, and per id a TRACE string kept until it changes
 * (made in buf, then copied) or fx_names_free. */
typedef struct fx_names {
    const char *const *func;
    const char *const *file;
    const char *const *module;
    size_t nfunc, nfile, nmodule;
    char buf[256]; /* scratch */
    unsigned calls;
    char **trace; /* per id: its TRACE string, or NULL */
    size_t ntrace;
} fx_names;

mt_namer fx_namer(fx_names *names);
void fx_names_free(fx_names *names);

#endif
