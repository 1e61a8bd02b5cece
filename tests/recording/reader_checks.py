"""reader_checks.py -- shared plumbing of the tests that read stored
recordings (test_reader_v1.py, test_reader_old.py): the command line, a
fresh work directory, checks that are printed and counted, the verdict.
Not a test itself."""
import os
import shutil
import sys

failed = []


def setup():
    """MEMTOP DAT_DUMP DATA_DIR WORKDIR from the command line; WORKDIR emptied."""
    memtop, dump, data, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return memtop, dump, data, work


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed.append(what)


def finish():
    if failed:
        print("%d check(s) failed" % len(failed))
        sys.exit(1)
    print("all checks passed")
