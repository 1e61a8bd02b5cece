/* cmd_replay.c -- `memtop -f FILE.dat --batch|--export`: reports from a
 * recording.  Recordings are not implemented yet (issue 5). */
#include "commands.h"

int mt_cmd_replay(const mt_opts *o)
{
    mt_errorf("%s: opening recordings is not available yet", o->replay_path);
    return MT_EXIT_FAIL;
}

int mt_cmd_record(const mt_opts *o)
{
    mt_errorf("%s: recording is not available yet", o->record_path);
    return MT_EXIT_FAIL;
}
