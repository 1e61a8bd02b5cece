/* help_panel.c -- `?`, `h` or F1: every key of the viewer, and what the
 * columns mean. */
#include "app.h"
#include "text_lines.h"

static const char *const keys[][2] = {
    {"Up/Down, j/k", "select a row"},
    {"PgUp/PgDn, Home/End", "move by pages, to the first or last row"},
    {"Enter", "details of the selected row: backtrace, counters, ages, history"},
    {"Esc, Left", "back from details, help or a menu; in the table, clear the filter"},
    {"s, F6", "choose the sort order"},
    {"L", "sort by leak suspicion"},
    {"M", "sort by live bytes (memory)"},
    {"G", "sort by growth of live bytes per second"},
    {"N, A, T", "sort by live blocks, allocations, temporary allocations"},
    {"/, F3", "filter rows by name as you type (Enter keeps it, Esc drops it)"},
    {"g, F4", "group rows by trace, function, source file or module"},
    {"b, F2", "mark a baseline: figures show the change since then (b again: clear)"},
    {"e, F7", "export the snapshot on screen as JSON (same schema as --export)"},
    {"P", "export the snapshot on screen as a pprof heap profile (.pb.gz)"},
    {"r, F8", "start or stop recording to a .dat file"},
    {"Space, F5", "pause or resume the data (keys keep working)"},
    {"Left/Right, [ ]", "recordings (-f): move the time cursor by 1% of the run"},
    {"{ }, < >", "recordings: by 10%; to the start or the end"},
    {"Ctrl-L", "redraw the screen"},
    {"?, h, F1", "this help"},
    {"q, F10", "quit (a program memtop started is ended: SIGTERM, then SIGKILL)"},
};

static const char *const columns[][2] = {
    {"LIVE", "bytes allocated here and not freed yet (with a baseline: the change)"},
    {"BLOCKS", "live blocks (allocations not freed)"},
    {"GROWTH/s", "change of LIVE per second over the last 30-60 s (else the last interval)"},
    {"ALLOC/s", "allocations per second between the last two refreshes"},
    {"TEMP%", "frees that came within MEMTOP_TEMP_MS of their allocation"},
    {"LEAK", "leak suspicion 0-100: sustained growth, bytes kept per second, blocks that age"},
    {"LOCATION", "first frame that is not allocator plumbing: function (file:line)"},
};

static void build(mt_app *a, mt_text_lines *l)
{
    const mt_theme *t = &a->theme;
    l->count = 0;
    mt_lines_add(l, t->title, "memtop keys");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        mt_lines_add(l, A_NORMAL, "  %-22s %s", keys[i][0], keys[i][1]);
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->title, "Columns");
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        mt_lines_add(l, A_NORMAL, "  %-22s %s", columns[i][0], columns[i][1]);
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->title, "Header");
    mt_lines_add(l, A_NORMAL,
                 "  Heap: live bytes the program asked for; Allocator: what malloc holds "
                 "from the kernel");
    mt_lines_add(l, A_NORMAL,
                 "  (\"not live\" = fragmentation and free lists); RSS: resident memory "
                 "of the process.");
    mt_lines_add(l, A_NORMAL,
                 "  Data: \"exact\", or what memtop could not see (unknown frees are "
                 "frees of blocks");
    mt_lines_add(l, A_NORMAL, "  allocated before tracking began; they change no other figure).");
    mt_lines_add(l, A_NORMAL,
                 "  \"NOT exact: ...\": an allocator memtop does not hook (statically linked "
                 "mimalloc, a");
    mt_lines_add(l, A_NORMAL,
                 "  program's own malloc, pymalloc): its blocks are missing from every figure.");
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->dim, "Esc, q or ? closes this help.  man memtop has the rest.");
}

static void draw(mt_app *a, int y, int h)
{
    build(a, &a->page);
    mt_lines_draw(&a->theme, &a->page, y, h, &a->ui.help_scroll);
}

static mt_key_result key(mt_app *a, int ch)
{
    switch (ch) {
    case 27:
    case 'q':
    case '?':
    case 'h':
    case KEY_F(1):
    case KEY_LEFT:
    case '\n':
    case '\r':
        return MT_KEY_CLOSE;
    case KEY_UP:
    case 'k':
        a->ui.help_scroll--;
        break;
    case KEY_DOWN:
    case 'j':
        a->ui.help_scroll++;
        break;
    case KEY_PPAGE:
        a->ui.help_scroll -= LINES / 2;
        break;
    case KEY_NPAGE:
        a->ui.help_scroll += LINES / 2;
        break;
    default:
        return MT_KEY_HANDLED; /* help is modal */
    }
    a->dirty = true;
    return MT_KEY_HANDLED;
}

static const mt_fkey fkeys[] = {{"Esc", "Close"}, {NULL, NULL}};

const mt_panel mt_help_panel = {"help", false, draw, key, fkeys};
