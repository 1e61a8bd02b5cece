/* seg_builder.h -- builds valid synthetic segments in memory for the reader
 * tests, so they can be corrupted one field at a time.  The layout follows
 * shm_layout.h the way libmemtop.so fills it, with small capacities. */
#ifndef MEMTOP_SEG_BUILDER_H
#define MEMTOP_SEG_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "shm_layout.h"

typedef struct sb_spec {
    int pid;          /* default: getpid(), with its real start time */
    uint32_t ntraces; /* defs and traces, ids 0..ntraces-1 */
    uint32_t nframes; /* frames per trace */
    uint32_t nmodules;
    uint32_t ntimeline;
    uint64_t defs_cap, modules_cap, slot_cap;
} sb_spec;

typedef struct sb_seg {
    unsigned char *buf;
    size_t size;
} sb_seg;

void sb_default_spec(sb_spec *s);

/* Slots 0 (publish_seq 1) and 1 (publish_seq 2, latest) are written; slot 2
 * is empty.  0 on success. */
int sb_build(sb_seg *seg, const sb_spec *spec);
void sb_free(sb_seg *seg);

mt_shm_header *sb_header(const sb_seg *seg);
mt_shm_slot *sb_slot(const sb_seg *seg, unsigned i);
mt_shm_trace *sb_traces(const sb_seg *seg, unsigned i);
mt_shm_def *sb_def(const sb_seg *seg, uint32_t id); /* the id-th record */
mt_shm_module *sb_module(const sb_seg *seg, unsigned i);

/* Module i's address range (for lookups in tests). */
uint64_t sb_module_start(unsigned i);
uint64_t sb_module_bias(unsigned i);

/* Write seg to path (created 0600 / truncated); 0 on success. */
int sb_write(const sb_seg *seg, const char *path);

#endif
