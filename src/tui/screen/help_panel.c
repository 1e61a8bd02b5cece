/* help_panel.c -- `?`, `h` or F1: every key of the viewer (from the key
 * table, keymap.c), and what the columns mean. */
#include <string.h>

#include "app.h"
#include "keymap.h"
#include "text_lines.h"

static const char *const columns[][2] = {
    {"LIVE", "bytes allocated here and not freed yet (with a baseline: the change)"},
    {"BLOCKS", "live blocks (allocations not freed)"},
    {"GROWTH/s", "change of LIVE per second over the last 30-36 s (else the last interval)"},
    {"ALLOC/s", "allocations per second between the last two refreshes"},
    {"TEMP%", "allocations freed within MEMTOP_TEMP_MS of being made"},
    {"LEAK", "leak suspicion 0-100: sustained growth, bytes kept per second, blocks that age"},
    {"LOCATION", "first frame that is not allocator plumbing: function (file:line)"},
    {"OWN", "call tree (t): live bytes allocated in the node itself; the rest is inclusive"},
};

/* How much of text fits in width columns: up to its last space that
 * fits (a word longer than the line is cut). */
static int line_len(const char *text, int width)
{
    int n = (int)strlen(text);
    if (n <= width)
        return n;
    n = width;
    while (n > 0 && text[n] != ' ')
        n--;
    return n > 0 ? n : width;
}

/* "  NAME                   text", the text wrapped at spaces to the
 * screen's width under its first line (it was cut at 120 columns). */
static void add_item(mt_text_lines *l, const char *name, const char *text)
{
    int width = COLS - 26 > 30 ? COLS - 26 : 30;
    for (bool first = true; *text; first = false) {
        int n = line_len(text, width);
        mt_lines_add(l, A_NORMAL, "  %-22s %.*s", first ? name : "", n, text);
        text += n;
        while (*text == ' ')
            text++;
    }
}

/* "  text", a paragraph wrapped to the screen's width (the Header
 * section's lines, written for 100 columns, were cut at 80). */
static void add_para(mt_text_lines *l, const char *text)
{
    mt_lines_add_wrapped(l, A_NORMAL, 2, "  %s", text);
}

static void build(mt_app *a, mt_text_lines *l)
{
    const mt_theme *t = &a->theme;
    l->count = 0;
    mt_lines_add(l, t->title, "memtop keys");
    size_t n;
    const mt_binding *b = mt_bindings(&n);
    for (size_t i = 0; i < n; i++)
        if (b[i].shown)
            add_item(l, b[i].shown, b[i].help);
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->title, "Columns");
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        add_item(l, columns[i][0], columns[i][1]);
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->title, "Header");
    add_para(l, "Heap: live bytes the program asked for; Allocator: what malloc holds from the "
                "kernel (\"not live\" = fragmentation and free lists); RSS: resident memory of "
                "the process; memtop: its own memory in the process, bookkeeping + what its "
                "shared segment holds.");
    add_para(l, "Data: \"exact\", or what memtop could not see (unknown frees are frees of "
                "blocks allocated before tracking began; they change no other figure).");
    add_para(l, "\"sampled 1/512 KiB\" (--sample, MEMTOP_SAMPLE): figures marked ~ are "
                "estimates from sampled blocks (docs/sampling.md); allocation and free totals "
                "stay exact.");
    add_para(l, "\"NOT exact: ...\": an allocator memtop does not hook (statically linked "
                "mimalloc, a program's own malloc, pymalloc): its blocks are missing from every "
                "figure.");
    mt_lines_add(l, A_NORMAL, "%s", "");
    mt_lines_add(l, t->dim, "Esc, q or ? closes this help.  man memtop has the rest.");
}

static void draw(mt_app *a, mt_panel *self, int y, int h)
{
    build(a, &a->page);
    mt_lines_draw(&a->theme, &a->page, y, h, &self->first);
}

static mt_key_result key(mt_app *a, mt_panel *self, int ch)
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
        self->first--;
        break;
    case KEY_DOWN:
    case 'j':
        self->first++;
        break;
    case KEY_PPAGE:
        self->first -= LINES / 2;
        break;
    case KEY_NPAGE:
        self->first += LINES / 2;
        break;
    case KEY_HOME:
    case 'g':
        self->first = 0;
        break;
    case KEY_END:
    case 'G':
        self->first = MT_LINES_MAX; /* mt_lines_draw clamps it to the last page */
        break;
    default:
        return MT_KEY_HANDLED; /* help is modal */
    }
    a->dirty = true;
    return MT_KEY_HANDLED;
}

static const mt_fkey fkeys[] = {{"Esc", "Close"}, {NULL, NULL}};

const mt_panel_class mt_help_class = {"help", false, draw, key, fkeys};
