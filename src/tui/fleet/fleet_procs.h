/* fleet_procs.h -- the exporter's table of processes: every running
 * process with libmemtop.so that this user may attach (the same discovery
 * as `memtop --list`: mt_proc_list_read, containers included as root),
 * each with its own attached view, kept across requests so that rates
 * survive between scrapes.  One symbolizer serves them all: its cache is
 * keyed by module file and build id, so processes running the same
 * programs and libraries share their debug info and names.
 *
 * A refresh re-lists, attaches new processes once (no waiting: one that is
 * still setting up is tried again at the next refresh), refreshes the
 * others (a copy of the segment's latest snapshot: the target is never
 * waited for nor slowed) and forgets the ones that exited or went away.
 * At most MT_FLEET_MAX_PROCS processes are kept; the rest are counted.
 *
 * Every listed process that is not kept is counted by what it is
 * (mt_fleet_classify): processes start and exit all the time, so the races
 * of a segment being set up or going away are "starting" or "gone", never
 * errors: an operator alerts on errors. */
#ifndef MEMTOP_FLEET_PROCS_H
#define MEMTOP_FLEET_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "location.h"
#include "memtop_ipc.h"
#include "symbols.h"
#include "view.h"

#define MT_FLEET_MAX_PROCS 1024

typedef struct mt_fleet_proc {
    int pid;
    mt_view v;      /* attached, with a snapshot */
    mt_locator loc; /* over v.mods with the fleet's symbolizer */
    char container[128];
    bool seen;      /* listed at the last refresh */
    uint8_t *pprof; /* the /pprof/heap answer made for snapshot pprof_seq */
    size_t pprof_len;
    uint64_t pprof_seq;
} mt_fleet_proc;

typedef struct mt_fleet {
    const char *dir;       /* the segment directory */
    mt_symbols syms;       /* shared by every process */
    mt_fleet_proc **procs; /* ascending pid */
    size_t count, cap;
    uint64_t refreshed_ns; /* CLOCK_MONOTONIC of the last refresh; 0: never */
    uint64_t generation;   /* refreshes done */
    /* --serve-min-age: a process is attached once it has run this long
     * (bounds the series of short-lived processes); 0: at once */
    uint64_t min_age_s;
    /* what the last listing found besides the processes kept */
    size_t listed, starting, too_young, denied, not_running, skipped, errors;
} mt_fleet;

/* What a listed process that is not kept counts as. */
typedef enum mt_fleet_class {
    MT_FLEET_GONE,        /* exited, its segment removed meanwhile: not counted */
    MT_FLEET_STARTING,    /* its segment is being set up, or has no snapshot yet */
    MT_FLEET_NOT_RUNNING, /* exited or stale: its file is left, its process gone */
    MT_FLEET_DENIED,      /* a live process of another user, or a file of an
                           * untrusted owner */
    MT_FLEET_ERROR,       /* a real failure: corrupt, foreign layout, I/O, no memory */
} mt_fleet_class;

/* The class of a process whose segment failed to open or read with rc
 * (MT_OK: it read, but the process no longer runs); alive: the process is
 * still there (a file not ready or refused of a gone process is a
 * leftover, not a process starting or another user's). */
mt_fleet_class mt_fleet_classify(mt_errc rc, bool alive);

/* symbols: false for --no-symbols; skip_env: MEMTOP_SKIP_FUNCS or NULL.
 * 0, or -1 when out of memory. */
int mt_fleet_init(mt_fleet *f, const char *dir, bool symbols, const char *skip_env);
void mt_fleet_free(mt_fleet *f);

/* Refresh if the last refresh is older than min_age_ns; true if it did. */
bool mt_fleet_refresh(mt_fleet *f, uint64_t min_age_ns);

/* The kept process pid, or NULL. */
mt_fleet_proc *mt_fleet_find(const mt_fleet *f, int pid);

uint64_t mt_fleet_now_ns(void);

#endif
