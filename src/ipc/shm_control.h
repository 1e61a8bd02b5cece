/* shm_control.h -- the viewer side of the control channel: send one
 * command to the target and wait (bounded) for its answer. */
#ifndef MEMTOP_SHM_CONTROL_H
#define MEMTOP_SHM_CONTROL_H

#include "shm_segment.h"

typedef struct mt_ctrl_reply {
    int32_t status; /* MT_CTRL_* */
    char msg[MT_CTRL_MSG_MAX];
} mt_ctrl_reply;

/* Take the channel lock (stealing it from a dead viewer), post cmd/arg,
 * wait up to timeout_ms for the answer, release the lock.  MT_E_TARGET if
 * the target answered with an error status (reply filled), MT_E_GONE if it
 * exited, MT_E_TIMEOUT if it did not answer. */
mt_errc mt_control_send(mt_segment *seg, uint32_t cmd, const char *arg, int timeout_ms,
                        mt_ctrl_reply *reply, mt_err *err);

/* What a recording started through the control channel keeps: culled
 * with this threshold (cull_ms > 0), the threads' order within a tick
 * (thread_order; else the target's MEMTOP_RECORD_ORDER, tick by default). */
typedef struct mt_record_kind {
    uint64_t cull_ms;
    bool thread_order;
} mt_record_kind;

/* The argument of MT_CMD_RECORD_START: the absolute path, after
 * "thread-order " and "cull=SECS " as kind says (docs/shm-protocol.md).
 * False if it does not fit in MT_CTRL_ARG_MAX. */
bool mt_control_record_arg(char *out, size_t n, const char *path, mt_record_kind kind);

/* The argument of MT_CMD_RECORD_STOP that stops only the process's
 * recording number `recording` (recording.recordings when the viewer saw
 * it run), not one another viewer started since; 0: whatever runs ("").
 * False if it does not fit in n. */
bool mt_control_stop_arg(char *out, size_t n, uint64_t recording);

#endif
