/* pf_segpeek.h -- lets a pitfall program look at its own memtop segment
 * (to check that a vfork child did not mark or remove its parent's). */
#ifndef PF_SEGPEEK_H
#define PF_SEGPEEK_H

#include <stdint.h>
#include <sys/types.h>

/* Reads header.flags of $MEMTOP_SHM_DIR/memtop-<pid>.  Returns 0, or -1
 * when there is no such segment (not running under the preload). */
int pf_segment_flags(pid_t pid, uint32_t *flags);
/* The same, with header.publish_count too. */
int pf_segment_state(pid_t pid, uint32_t *flags, uint64_t *publishes);

#endif
