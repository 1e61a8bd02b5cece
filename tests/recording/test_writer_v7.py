"""test_writer_v7.py -- a recording in tick order is format version 8
(docs/recording-format.md, 13 EVENTS2, "Version 7" and "Version 8") and
replays exactly:

 - writer_xfree.c (4 threads freeing each other's blocks, addresses reused
   at once; glibc's tcache off, one arena): frees named among every
   thread's allocations of the trace, as in version 6;
 - memtop-alloc-bench at 4 threads, over frame boundaries: runs of
   references (each ref after the first as the gap from the one before),
   rising sizes (a size above the trace's last one as the gap), references
   into the frame before (version 7); TAG_PAIRS tables, EVENTS2 records
   whose tags are coded by pairs, escapes, and never an escape of a pair
   its table lists (version 8);
 - memtop-demo, a slow program: version 8, its small frames never get a
   TAG_PAIRS (its tags as they are);
 - the same bench in the threads' order (MEMTOP_RECORD_ORDER=thread):
   version 6, none of version 7's or 8's rules.

Each: dat_dump (the writer tests' own decoder, not memtop's reader)
decodes it, no event dropped (a run that dropped is repeated, up to 3
times), and the replayed counters equal the FINAL state for every trace.
Fails with a writer that writes version 7 or 6 in tick order, that names a
block with a wrong index, codes a pair the table does not give or with
another frame's table (dat_dump: corrupt, or the replay differs), or
that never uses runs, rising sizes or tag pairs."""
import os
import subprocess

from test_writer_common import args, check, dump, env, fail

a = args()
xfree = os.path.join(a.progs, "writer_xfree")


def record(name, argv, **extra):
    """The info and replay rows of a recording of argv without drops."""
    for attempt in range(3):
        path = os.path.join(a.workdir, "%s-%d.dat" % (name, attempt))
        r = subprocess.run(argv, env=env(a, MEMTOP_RECORD=path, **extra), capture_output=True,
                           text=True, timeout=240)
        check(r.returncode == 0, "%s: the target exits 0 (%s)" % (name, r.stderr.strip()[-300:]))
        info, rows, _ = dump(a, path, traces=True)
        if not info["end_dropped"]:
            bad = [row for row in rows if row[3] != row[4]]
            check(info["finalized"] == 1 and rows and not bad,
                  "%s: replayed counters == FINAL state for all %d traces %s" % (name, len(rows),
                                                                                 bad[:3]))
            return info
        print("note: %s: %d events dropped, run again" % (name, info["end_dropped"]))
    fail("%s: events were dropped in 3 runs: no exact comparison possible" % name)


def counts(info):
    return ("version %(version)d: %(ref_frees)d FREE_REF, %(prev_frees)d FREE_PREV, "
            "%(ref_runs)d in runs, %(rising_sizes)d rising sizes, %(full_frees)d in full; "
            "%(tag_pairs)d TAG_PAIRS, %(paired_records)d of %(records_13)d EVENTS2 records "
            "paired, %(tag_codes)d codes, %(tag_escapes)d escapes (%(escapes_listed)d of "
            "listed pairs), %(odd_tags)d odd tags" % dict({"records_13": 0}, **info))


# 1. Cross-thread frees.
info = record("xfree", [xfree, "40000"], MALLOC_ARENA_MAX=1,
              GLIBC_TUNABLES="glibc.malloc.tcache_count=0")
check(info["version"] == 8 and info["tick_order"] == 1 and info["ref_frees"] > 0,
      "xfree: references: " + counts(info))

# 2. The bench: runs, rising sizes, the frame before.
bench = [a.bench, "-t", "4", "-n", "150000"]
info = record("bench", bench)
check(info["version"] == 8 and info["frames"] >= 2 and info["prev_frees"] > 0 and
      info["ref_runs"] > 0 and info["rising_sizes"] > 0, "bench: " + counts(info))
# more than one table: a frame's own (the first) and the frame before's
check(info["tag_pairs"] >= 2 and info["paired_records"] > 0 and info["tag_codes"] > 0 and
      info["tag_escapes"] > 0 and info["escapes_listed"] == 0, "bench: paired tags: " +
      counts(info))

# 2b. A slow program: small frames, never a table.
info = record("demo", [a.demo, "3"])
check(info["version"] == 8 and info["frames"] >= 2 and info.get("records_13", 0) > 0 and
      info["tag_pairs"] == 0 and info["paired_records"] == 0, "demo: no TAG_PAIRS: " +
      counts(info))

# 3. The threads' order: version 6, as before.
info = record("thread", bench, MEMTOP_RECORD_ORDER="thread")
check(info["version"] == 6 and info["tick_order"] == 0 and info["ref_runs"] == 0 and
      info["rising_sizes"] == 0 and info["ref_frees"] > 0 and info["tag_pairs"] == 0,
      "thread order: " + counts(info))
