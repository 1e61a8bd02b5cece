/* text_printable.h -- strings read from another process (a target's
 * status record, its shared segment, a recording from elsewhere) made safe
 * to print: each control character becomes '?'.
 *
 * Why: they reach a terminal as they are (--batch, the text export, the
 * one-line errors), and another user's target may hold an escape sequence
 * (a title set, the screen cleared).  The viewer's own formatting has
 * mt_fmt_sanitize (src/tui/base/format.c), above this layer. */
#ifndef MEMTOP_TEXT_PRINTABLE_H
#define MEMTOP_TEXT_PRINTABLE_H

static inline void mt_printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

#endif
