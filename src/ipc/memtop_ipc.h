/* memtop_ipc.h -- umbrella header of the segment reader library
 * (libmemtop_ipc.a): open and validate a segment, read snapshots, trace
 * definitions and modules, talk to the target over the control channel;
 * touch the mapping only through the guard (shm_guard.h). */
#ifndef MEMTOP_IPC_H
#define MEMTOP_IPC_H

#include "shm_allocators.h"
#include "shm_control.h"
#include "shm_defs.h"
#include "shm_error.h"
#include "shm_guard.h"
#include "shm_lease.h"
#include "shm_layout.h"
#include "shm_liveness.h"
#include "shm_maps.h"
#include "shm_modules.h"
#include "preload_probe.h"
#include "shm_owner.h"
#include "shm_path.h"
#include "shm_recording.h"
#include "shm_segment.h"
#include "shm_snapshot.h"

#endif
