/* segctl.c -- play a viewer on a segment's control channel: a well-behaved
 * PING, and a viewer that takes the lock, posts a request and then hangs
 * (to be killed with SIGKILL by the test).  Used by the viewer-misbehaviour
 * pitfall test.
 */
#include "segctl.h"

#include "shm_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static mt_shm_header *map_header(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "segtool: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    void *p = mmap(NULL, MT_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "segtool: cannot map %s\n", path);
        return NULL;
    }
    return p;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Takes the control lock, stealing it from a dead owner.  0 on success. */
static int take_lock(mt_shm_control *c, int timeout_ms)
{
    uint32_t me = (uint32_t)getpid();
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        uint32_t cur = 0;
        if (__atomic_compare_exchange_n(&c->lock, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 0;
        if (kill((pid_t)cur, 0) != 0 && errno == ESRCH &&
            __atomic_compare_exchange_n(&c->lock, &cur, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 0;
        sleep_ms(10);
    }
    return -1;
}

static uint64_t post(mt_shm_control *c, uint32_t cmd)
{
    c->cmd = cmd;
    c->arg[0] = '\0';
    uint64_t req = __atomic_load_n(&c->resp_seq, __ATOMIC_ACQUIRE) + 1;
    __atomic_store_n(&c->req_seq, req, __ATOMIC_RELEASE);
    return req;
}

int mtp_ctl_ping(const char *path, int timeout_ms)
{
    mt_shm_header *h = map_header(path);
    if (!h)
        return 2;
    mt_shm_control *c = &h->control;
    if (take_lock(c, timeout_ms) != 0) {
        fprintf(stderr, "segtool: control lock stays taken (lock=%u)\n", c->lock);
        return 1;
    }
    uint64_t req = post(c, MT_CMD_PING);
    int rc = 1;
    for (int waited = 0; waited < timeout_ms; waited += 5) {
        if (__atomic_load_n(&c->resp_seq, __ATOMIC_ACQUIRE) == req) {
            char msg[MT_CTRL_MSG_MAX + 1];
            memcpy(msg, c->msg, MT_CTRL_MSG_MAX);
            msg[MT_CTRL_MSG_MAX] = '\0';
            printf("status=%d msg=%s\n", c->status, msg);
            rc = c->status == MT_CTRL_OK ? 0 : 1;
            break;
        }
        sleep_ms(5);
    }
    if (rc != 0 && __atomic_load_n(&c->resp_seq, __ATOMIC_ACQUIRE) != req)
        fprintf(stderr, "segtool: no answer to PING within %d ms\n", timeout_ms);
    __atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
    return rc;
}

int mtp_ctl_hold(const char *path)
{
    mt_shm_header *h = map_header(path);
    if (!h)
        return 2;
    if (take_lock(&h->control, 5000) != 0)
        return 1;
    post(&h->control, MT_CMD_PUBLISH_NOW);
    printf("holding\n");
    fflush(stdout);
    for (;;)
        pause(); /* the test kills us here, lock held */
}

int mtp_layout(void)
{
    size_t ctl = offsetof(mt_shm_header, control);
    printf("{\"control_off\":%zu,\"control_size\":%zu,\"header_bytes\":%u,"
           "\"lock_off\":%zu,\"req_seq_off\":%zu,\"resp_seq_off\":%zu,",
           ctl, sizeof(mt_shm_control), MT_HEADER_BYTES, ctl + offsetof(mt_shm_control, lock),
           ctl + offsetof(mt_shm_control, req_seq), ctl + offsetof(mt_shm_control, resp_seq));
    printf("\"magic\":%llu,\"pid_off\":%zu,\"ppid_off\":%zu,\"exe_off\":%zu,"
           "\"cmdline_off\":%zu,\"flags_off\":%zu,\"publish_count_off\":%zu,",
           MT_SHM_MAGIC, offsetof(mt_shm_header, pid), offsetof(mt_shm_header, ppid),
           offsetof(mt_shm_header, exe), offsetof(mt_shm_header, cmdline),
           offsetof(mt_shm_header, flags), offsetof(mt_shm_header, publish_count));
    printf("\"segment_bytes_off\":%zu,\"defs_used_off\":%zu,\"slots_off\":%zu,"
           "\"slot_ref_size\":%zu,\"slot_ref_off_off\":%zu,\"slots\":%u}\n",
           offsetof(mt_shm_header, segment_bytes), offsetof(mt_shm_header, defs_used),
           offsetof(mt_shm_header, slots), sizeof(mt_shm_slot_ref), offsetof(mt_shm_slot_ref, off),
           MT_SLOTS);
    return 0;
}
