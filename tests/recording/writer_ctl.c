/* writer_ctl.c -- drive a target's recording through the control channel,
 * for the writer's tests: start PATH, stop, or status.  Uses the ipc
 * library like the viewer does (mt_control_send, mt_segment_recording_why).
 *
 * Usage: writer_ctl SHM_DIR PID start PATH | start-leased PATH | stop | status
 * (start: MT_CMD_RECORD_START, as a viewer older than leases sends it;
 * start-leased: MT_CMD_RECORD_START_LEASED, a lease this program never
 * renews, so that it lapses at once: docs/shm-protocol.md)
 * Prints "status N", "msg ...", then the recording status fields as
 * "key value" lines (rec_why_N: the dropped events of cause N;
 * rec_seq_offset: where the status's seqlock word lies in the segment).  Exit 0 when the command
 * was answered OK. */
#include "memtop_ipc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_status(const mt_segment *seg)
{
    mt_shm_recording r;
    mt_err err;
    uint64_t why[MT_REC_WHY_MAX];
    mt_rec_lease_info lease;
    uint64_t published = 0;
    printf("rec_seq_offset %zu\n", offsetof(mt_shm_header, rec_seq));
    if (mt_segment_load64(seg, &mt_segment_header(seg)->publish_count, &published, &err) == MT_OK)
        printf("publish_count %llu\n", (unsigned long long)published);
    if (mt_segment_recording_lease(seg, &r, why, &lease, &err) != MT_OK) {
        printf("rec_error %s\n", err.msg);
        return;
    }
    char line[1024];
    mt_recording_line(&r, why, line, sizeof line);
    for (unsigned i = 0; i < MT_REC_WHY_MAX; i++)
        printf("rec_why_%u %llu\n", i, (unsigned long long)why[i]);
    printf("rec_state %u\nrec_error %d\nrec_bytes %llu\nrec_events %llu\nrec_dropped %llu\n"
           "rec_count %llu\nrec_path %s\nrec_message %s\nrec_line %s\n",
           r.state, r.error, (unsigned long long)r.bytes_written,
           (unsigned long long)r.events_written, (unsigned long long)r.events_dropped,
           (unsigned long long)r.recordings, r.path, r.message, line);
    printf("rec_lease_ms %u\nrec_end_reason %u\n", lease.ms, lease.end_reason);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return fprintf(stderr, "usage: writer_ctl SHM_DIR PID start PATH|stop|status\n"), 2;
    mt_segment seg;
    mt_err err;
    if (mt_segment_open_pid(&seg, argv[1], atoi(argv[2]), &err) != MT_OK)
        return fprintf(stderr, "writer_ctl: %s\n", err.msg), 2;
    int rc = 0;
    if (strcmp(argv[3], "status") != 0) {
        uint32_t cmd = strcmp(argv[3], "start") == 0          ? MT_CMD_RECORD_START
                       : strcmp(argv[3], "start-leased") == 0 ? MT_CMD_RECORD_START_LEASED
                                                              : MT_CMD_RECORD_STOP;
        mt_ctrl_reply reply;
        memset(&reply, 0, sizeof reply);
        mt_errc e = mt_control_send(&seg, cmd, argc > 4 ? argv[4] : "", 10000, &reply, &err);
        printf("status %d\nmsg %s\n", e == MT_OK || e == MT_E_TARGET ? reply.status : -1,
               e == MT_OK || e == MT_E_TARGET ? reply.msg : err.msg);
        rc = e == MT_OK ? 0 : 1;
    }
    print_status(&seg);
    mt_segment_close(&seg);
    return rc;
}
