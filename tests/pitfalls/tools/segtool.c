/* segtool.c -- test helper: inspect or poke a memtop segment.
 *
 *   mtp_segtool layout            offsets of the control area (JSON)
 *   mtp_segtool json FILE         newest complete snapshot as JSON
 *                                 (exit 3: nothing published yet)
 *   mtp_segtool readloop FILE     read snapshots forever (a viewer to kill)
 *   mtp_segtool ping FILE         PING over the control channel
 *   mtp_segtool hold FILE         take the control lock and hang
 */
#include "segctl.h"
#include "segjson.h"
#include "segmap.h"

#include <stdio.h>
#include <string.h>

static int cmd_json(const char *path)
{
    mtp_seg seg;
    mtp_snap snap;
    if (mtp_seg_open(path, &seg) != 0)
        return 2;
    int rc = mtp_seg_snapshot(&seg, &snap);
    if (rc == 0)
        mtp_put_json(stdout, &seg, &snap);
    else if (rc == 1)
        fprintf(stderr, "segtool: no snapshot published yet\n");
    mtp_snap_free(&snap);
    mtp_seg_close(&seg);
    return rc == 0 ? 0 : (rc == 1 ? 3 : 2);
}

static int cmd_readloop(const char *path)
{
    printf("reading\n");
    fflush(stdout);
    for (unsigned long n = 0;; n++) {
        mtp_seg seg;
        mtp_snap snap;
        if (mtp_seg_open(path, &seg) != 0)
            return 2;
        if (mtp_seg_snapshot(&seg, &snap) == 0 && n % 64 == 0) {
            FILE *null = fopen("/dev/null", "w");
            if (null) {
                mtp_put_json(null, &seg, &snap);
                fclose(null);
            }
        }
        mtp_snap_free(&snap);
        mtp_seg_close(&seg);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "layout") == 0)
        return mtp_layout();
    if (argc != 3) {
        fprintf(stderr, "usage: mtp_segtool layout | {json|readloop|ping|hold} FILE\n");
        return 2;
    }
    if (strcmp(argv[1], "json") == 0)
        return cmd_json(argv[2]);
    if (strcmp(argv[1], "readloop") == 0)
        return cmd_readloop(argv[2]);
    if (strcmp(argv[1], "ping") == 0)
        return mtp_ctl_ping(argv[2], 10000);
    if (strcmp(argv[1], "hold") == 0)
        return mtp_ctl_hold(argv[2]);
    fprintf(stderr, "segtool: unknown command %s\n", argv[1]);
    return 2;
}
