"""check_same_site.py -- rows on screen that share a LOCATION name their callers.

memtop-same-site (tests/symbolize/same_site.c): make_label allocates for
four callers, four traces located at "make_label (same_site.c:N)".  On
screen each such row must also name the callers that tell it apart:
"make_label (...) \u2190 parse_config (...)", and past the shared via_table
"\u2190 via_table (...) \u2190 start_a (...)"; lone_site, alone at its
location, names none.  Asserts it in a UTF-8 locale (\u2190), with --ascii
("<-"), and that grouped by function (g) make_label is one row of 4 traces
without callers.  At 80 columns, in UTF-8 and with --ascii, the four rows still read
differently, each ending with the whole name of the caller that tells it
apart (their frames' file:line given up for the callers, then the end of
the shared location's name).
"""
import tuilib
from tuilib import check, frame

# What ends each make_label row at 80 columns: the caller that tells it apart.
TELLERS = ["load_plugins", "parse_config", "start_a", "start_b"]
CALLERS = ("parse_config (", "load_plugins (", "via_table (same_site.c:", "start_a (",
           "start_b (")


def site(rows):
    return [r.location for r in rows if r.location.startswith("make_label (")]


def told_apart(arrow):
    def ok(rows, s):
        locs = site(rows)
        return (len(locs) == 4 and len(set(locs)) == 4 and
                all(arrow in x for x in locs) and
                all(any(c in x for x in locs) for c in CALLERS))
    return ok


def check_lone(rows, s, arrow):
    lone = [r.location for r in rows if r.location.startswith("lone_site (")]
    check(len(lone) == 1 and arrow not in lone[0],
          "lone_site, alone at its location, must name no caller: %r\n%s" % (lone, frame(s)))


def test(t):
    prog = t.args.same_site
    t.start([t.memtop, "--", prog, "60"], width=160)
    rows, s = t.wait_rows(told_apart("\u2190"),
                          "four make_label rows, each naming its callers with \u2190")
    check_lone(rows, s, "\u2190")
    print("ok: UTF-8: %s" % " | ".join(site(rows)))

    t.keys("g")
    rows, s = t.wait_rows(lambda rows, s: any(r.location.startswith("make_label") and
                                              "(4 traces)" in r.location for r in rows),
                          "grouped by function: one make_label row of 4 traces")
    check(not any("\u2190" in r.location for r in rows),
          "grouped by function, no row names callers:\n" + frame(s))

    t.start([t.memtop, "--ascii", "--", prog, "60"], width=160)
    rows, s = t.wait_rows(told_apart(" <- "), "four make_label rows naming callers with <-")
    check_lone(rows, s, " <- ")
    check(not any("\u2190" in r.location for r in rows), "--ascii: a \u2190 on screen:\n" +
          frame(s))
    print("ok: --ascii: %s" % " | ".join(site(rows)))

    # At 80 columns the LOCATION column is narrow: the rows still differ on
    # screen, their frames' file:line given up for the callers' names, then
    # the shared location's end (--ascii's wider arrows): each row ends with
    # the whole name of the caller that tells it apart
    for opts, arrow in (([], "\u2190"), (["--ascii"], " <- ")):
        t.start([t.memtop] + opts + ["--", prog, "60"], width=80, height=24)
        rows, s = t.wait_rows(lambda rows, s: len(site_names(rows)) == 4,
                              "four make_label rows at 80 columns %s" % " ".join(opts))
        locs = site_names(rows)
        check(len(set(locs)) == 4 and all(arrow in x for x in locs) and
              sorted(x.rsplit(arrow, 1)[1].strip() for x in locs) == TELLERS,
              "at 80 columns %s the make_label rows do not each end with the caller that "
              "tells them apart %r: %r\n%s" % (" ".join(opts), TELLERS, locs, frame(s)))
        print("ok: 80 columns %s: %s" % (" ".join(opts), " | ".join(locs)))


def site_names(rows):
    """make_label's rows, its name cut or not ("make_l~ <- ... <- start_a")."""
    return [r.location for r in rows if r.location.startswith("make_l")]


tuilib.main(test, __doc__)
