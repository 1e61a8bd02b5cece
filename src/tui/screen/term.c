/* term.c -- terminal setup and restore (see term.h).
 *
 * Global state: the tty modes saved before ncurses changed them, and
 * whether they are valid.  A crash handler cannot be given a context, so
 * these two are the viewer's only globals; they are written once before
 * any handler is installed and only read afterwards. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <ncursesw/curses.h>
#include <ncursesw/term.h>

#include "term.h"

static struct termios saved_tty;
static volatile sig_atomic_t saved_valid;

static void crash_restore(int sig)
{
    static const char leave[] = "\033[0m\033[?25h\033[?1049l\r\n";
    if (saved_valid)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    ssize_t w = write(STDOUT_FILENO, leave, sizeof leave - 1);
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
