/* term.c -- terminal setup and restore (see term.h).
 *
 * Global state: the tty modes saved before ncurses changed them, whether
 * they are valid, and the bytes that take the terminal out of memtop's
 * modes (attributes, cursor, keypad, alternate screen), looked up in
 * terminfo.  A crash handler cannot be given a context, so these are the
 * viewer's only globals; they are written once before any handler is
 * installed and only read afterwards. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <ncursesw/curses.h>
#include <ncursesw/term.h>

#include "shm_guard.h"
#include "term.h"

static struct termios saved_tty;
static volatile sig_atomic_t saved_valid;
static char leave_seq[256];
static size_t leave_len;

/* Appends terminfo capability cap (or fallback when the terminal has none,
 * or when cap is NULL). */
static void leave_add(const char *cap, const char *fallback)
{
    const char *s = cap ? tigetstr(cap) : NULL;
    if (s == NULL || s == (const char *)-1)
        s = fallback;
    size_t n = strlen(s);
    if (leave_len + n < sizeof leave_seq) {
        memcpy(leave_seq + leave_len, s, n);
        leave_len += n;
    }
}

/* What endwin would send, computed while it is safe to call terminfo. */
static void leave_prepare(void)
{
    leave_len = 0;
    leave_add("sgr0", "\033[0m");
    leave_add("cnorm", "\033[?25h");
    leave_add("rmkx", "");
    leave_add("rmcup", "\033[?1049l");
    leave_add(NULL, "\r\n");
}

static void crash_restore(int sig)
{
    if (saved_valid)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    ssize_t w = write(STDOUT_FILENO, leave_seq, leave_len);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_crash_handlers(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_restore;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    mt_guard_install(); /* on top: a segment that shrinks is an error, not a crash */
}

/* Whether the terminal setupterm found can move the cursor anywhere
 * ("cup"): the screen is drawn by addressing; "dumb" cannot. */
static bool can_address(void)
{
    const char *cup = tigetstr("cup");
    return cup && cup != (const char *)-1 && cup[0];
}

bool mt_term_start(char *msg, size_t n)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(msg, n, "the interactive view needs a terminal (use --batch for text output)");
        return false;
    }
    if (tcgetattr(STDIN_FILENO, &saved_tty) == 0)
        saved_valid = 1;
    int err = 0;
    const char *term = getenv("TERM");
    if (setupterm(term, STDOUT_FILENO, &err) != OK) {
        snprintf(msg, n, "unknown terminal type '%s' (set TERM, or use --batch)", term ? term : "");
        return false;
    }
    if (!can_address()) {
        snprintf(msg, n,
                 "terminal type '%s' cannot move the cursor (set TERM, or use --batch for text "
                 "output)",
                 term ? term : "");
        del_curterm(cur_term);
        return false;
    }
    leave_prepare();
    install_crash_handlers();
    initscr();
    cbreak();
    struct termios tio; /* no XON/XOFF: Ctrl-S would stop the screen mid-write */
    if (tcgetattr(STDIN_FILENO, &tio) == 0) {
        tio.c_iflag &= ~(tcflag_t)IXON;
        tcsetattr(STDIN_FILENO, TCSANOW, &tio);
    }
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    return true;
}

void mt_term_stop(void)
{
    if (!isendwin())
        endwin();
}
