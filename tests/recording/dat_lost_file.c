/* dat_lost_file.c -- writes a small recording with dropped events of every
 * cause (LOST records, dat_format.h MT_DAT_LOST_*), for the tests of how
 * the viewer and the exports show them (tests/tui/check_replay_drops.py).
 * Built by hand (test_reader_builder), so the file is the same every time
 * whatever the machine does.
 *
 *   new: the standard 3-second recording (version 2 header, as an exact
 *        recording's writer once wrote), then LOST records: disk behind 3,
 *        writer stalled 2, hook could not wait 1, no buffer 1, initial-state
 *        capture 4, missed at the end 1, and one without causes (an older
 *        writer's) of 2 events: 14 events;
 *   old: the same recording with only the LOST record an older writer
 *        wrote (2 events, no causes): it must read as before.
 *
 * Usage: dat_lost_file new|old OUT.dat   exit 0 ok, 2 usage/io */
#include <stdio.h>
#include <string.h>

#include "test_reader_builder.h"

/* A LOST record of thread tid: ac allocations (16 bytes each) and fc frees
 * (8 bytes each), with the n (cause, count) pairs of why, or no causes
 * when why is NULL. */
static void lost(db_file *f, uint64_t tid, uint64_t ac, uint64_t fc, const uint64_t (*why)[2],
                 size_t n)
{
    db_buf b = {0};
    db_v(&b, 3500000000u), db_v(&b, tid);
    db_v(&b, ac), db_v(&b, ac * 16), db_v(&b, fc), db_v(&b, fc * 8);
    if (why) {
        db_v(&b, n);
        for (size_t i = 0; i < n; i++)
            db_v(&b, why[i][0]), db_v(&b, why[i][1]);
    }
    db_rec(f, MT_DAT_REC_LOST, &b, 0);
    db_buf_free(&b);
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "new") && strcmp(argv[1], "old"))) {
        fprintf(stderr, "usage: dat_lost_file new|old OUT.dat\n");
        return 2;
    }
    db_file f;
    db_standard(&f, 3, 0);
    if (!strcmp(argv[1], "new")) {
        lost(&f, 11, 3, 2, (const uint64_t[][2]){{MT_DAT_LOST_DISK, 3}, {MT_DAT_LOST_WAIT_CAP, 2}},
             2);
        lost(&f, 12, 0, 1, (const uint64_t[][2]){{MT_DAT_LOST_NOWAIT, 1}}, 1);
        lost(&f, 0, 1, 0, (const uint64_t[][2]){{MT_DAT_LOST_NO_BUFFER, 1}}, 1);
        lost(&f, 13, 2, 2, (const uint64_t[][2]){{MT_DAT_LOST_CAPTURE, 4}}, 1);
        lost(&f, 0, 1, 0, (const uint64_t[][2]){{MT_DAT_LOST_UNSEEN, 1}}, 1);
    }
    lost(&f, 14, 1, 1, NULL, 0);
    db_flush(&f);
    int rc = db_write(f.out.p, f.out.n, argv[2]);
    db_file_free(&f);
    return rc ? 2 : 0;
}
