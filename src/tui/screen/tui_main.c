/* tui_main.c -- the interactive viewer's entry point. */
#include "commands.h"

int mt_cmd_tui(const mt_opts *o)
{
    (void)o;
    mt_errorf("the interactive view is not available yet; use --batch");
    return MT_EXIT_USAGE;
}
