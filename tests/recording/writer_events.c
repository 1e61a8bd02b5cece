/* writer_events.c -- prints a recording's events in file order, for the
 * writer's tests (test_writer_churn.py, test_writer_stop.py), with the
 * validating reader (src/ipc/dat_reader.h):
 *   "a TID SIZE" / "f TID SIZE"  an allocation / a free of thread TID
 *   "lost TID ALLOCS FREES"      a LOST record
 *   "end DROPPED"                END's events_dropped
 * Usage: writer_events FILE.dat      exit 0 ok, 1 unreadable/corrupt */
#include "dat_reader.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return fprintf(stderr, "usage: writer_events FILE.dat\n"), 1;
    mt_err err;
    mt_dat_reader *r = mt_dat_open(argv[1], &err);
    if (!r)
        return fprintf(stderr, "writer_events: %s\n", err.msg), 1;
    mt_dat_event ev;
    mt_errc rc;
    while ((rc = mt_dat_next(r, &ev, &err)) == MT_OK) {
        if (ev.kind == MT_DAT_ALLOC || ev.kind == MT_DAT_FREE)
            printf("%c %u %llu\n", ev.kind == MT_DAT_ALLOC ? 'a' : 'f', ev.u.ev.tid,
                   (unsigned long long)ev.u.ev.size);
        else if (ev.kind == MT_DAT_LOST)
            printf("lost %u %llu %llu\n", ev.u.lost.tid, (unsigned long long)ev.u.lost.alloc_count,
                   (unsigned long long)ev.u.lost.free_count);
        else if (ev.kind == MT_DAT_END)
            printf("end %llu\n", (unsigned long long)ev.u.end.events_dropped);
    }
    mt_dat_close(r);
    if (rc != MT_E_EMPTY && rc != MT_OK)
        return fprintf(stderr, "writer_events: %s\n", err.msg), 1;
    return 0;
}
