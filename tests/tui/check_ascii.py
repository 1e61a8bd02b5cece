"""check_ascii.py -- ASCII fallback and --no-color.

Control run (UTF-8 locale, colours): the screen has non-ASCII characters (box
lines, the graph, ΔLIVE after b) and colour escapes -- so the checks below
can see them.  Then, on the table, after b (the delta headings), in the
detail view and in the help, asserts:
  - LANG=C LC_ALL=C: every byte of the screen is ASCII (< 0x80), and the
    baseline headings read dLIVE/dBLOCKS;
  - --ascii --no-color in a UTF-8 locale: ASCII only, and no colour escape
    sequences at all in `capture-pane -e` (bold/reverse/underline are fine).
"""
import re

import tuilib
from tuilib import check, frame

SGR = re.compile(rb"\x1b\[([0-9;:]*)m")


def colour_codes(raw):
    """The SGR parameters that set a colour (not bold, reverse, underline, resets)."""
    found = []
    for m in SGR.finditer(raw):
        params = [p for p in re.split(rb"[;:]", m.group(1)) if p]
        for p in params:
            n = int(p)
            if 30 <= n <= 38 or 40 <= n <= 48 or 90 <= n <= 97 or 100 <= n <= 107:
                found.append(m.group(0))
    return found


def non_ascii(raw):
    return sorted({b for b in raw if b >= 0x80})


def screens(t, delta):
    """(name, raw, raw with escapes) of the table, the table after b, the detail, the help."""
    out = []

    def grab(name):
        out.append((name, t.screen_bytes(), t.screen_bytes(escapes=True)))

    t.wait_symbolized()
    grab("table")
    t.keys("b")
    t.wait_for(lambda s: (tuilib.parse_table(s)[0] or "").find(delta + "LIVE") >= 0,
               "the %sLIVE heading after b" % delta)
    grab("table after b")
    t.keys("b")
    # the plain headings back (the table rebuilt) before Enter: an Enter read
    # in the same batch as b once opened nothing on a loaded machine
    t.wait_for(lambda s: (tuilib.parse_table(s)[0] or "").find(delta + "LIVE") < 0 and
               (tuilib.parse_table(s)[0] or "").find("LIVE") >= 0, "the LIVE heading after b again")
    t.keys("Enter")
    t.wait_for(lambda s: "Backtrace" in s and "Leak suspicion" in s, "the detail view")
    grab("detail view")
    t.keys("Escape")
    t.keys("?")
    t.wait_for("memtop keys", "the help")
    grab("help")
    t.keys("Escape")
    return out


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    control = screens(t, "\u0394")
    check(any(non_ascii(raw) for _, raw, _ in control),
          "control: no non-ASCII byte on any UTF-8 screen; the ASCII check would prove nothing")
    check(any(colour_codes(esc) for _, _, esc in control),
          "control: no colour escape on any screen; the --no-color check would prove nothing")

    t.start([t.memtop, "--", t.demo, "60"], LANG="C", LC_ALL="C")
    for name, raw, _ in screens(t, "d"):
        bad = non_ascii(raw)
        check(not bad, "LC_ALL=C: non-ASCII bytes %s on the %s:\n%s" %
              ([hex(b) for b in bad[:8]], name, frame(raw.decode("utf-8", "replace"))))

    t.start([t.memtop, "--ascii", "--no-color", "--", t.demo, "60"])
    for name, raw, esc in screens(t, "d"):
        bad = non_ascii(raw)
        check(not bad, "--ascii: non-ASCII bytes %s on the %s:\n%s" %
              ([hex(b) for b in bad[:8]], name, frame(raw.decode("utf-8", "replace"))))
        codes = colour_codes(esc)
        check(not codes, "--no-color: colour escapes %s on the %s" % (codes[:5], name))


tuilib.main(test, __doc__)
