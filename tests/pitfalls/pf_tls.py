#!/usr/bin/env python3
"""Pitfall 1 (TLS): 2000 short-lived threads, each touching dynamic TLS of a
dlopen'ed module and allocating at known sites; exact counts expected.

And memtop's own thread-locals: libmemtop.so must reach them without
__tls_get_addr (which may allocate on a thread's first access, inside a
hook): only initial-exec relocations (R_X86_64_TPOFF64), none of the
general- or local-dynamic kind (DTPMOD64, DTPOFF64, TLSDESC), no import of
__tls_get_addr, and the STATIC_TLS flag when it has a TLS segment.  Read
with readelf (binutils), skipped without it."""
import re
import shutil
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/lib")
from mtplib import Test  # noqa: E402

THREADS = 2000
t = Test("tls")
snap = t.run_all([t.prog("pf_tls")], 0)
t.check_marker(snap, 4093, "malloc in threads", alloc=3 * THREADS, free=3 * THREADS, live=0)
t.check_marker(snap, 7 * 577, "calloc in threads", alloc=THREADS, free=THREADS, live=0)
if snap and "thread_count" in snap["totals"]:
    # all joined: each thread was counted off at its exit, the main one stays
    t.check(snap["totals"]["thread_count"] == 1,
            "totals.thread_count %d after %d threads that allocated exited, not 1"
            % (snap["totals"]["thread_count"], THREADS))
if t.have_lib and shutil.which("readelf"):
    def readelf(*opts):
        return subprocess.run(["readelf", "-W"] + list(opts) + [t.lib], capture_output=True,
                              text=True, check=True).stdout
    dynamic = re.findall(r"R_X86_64_(?:DTPMOD64|DTPOFF64|TLSDESC)\S*", readelf("-r"))
    t.check(not dynamic, "libmemtop.so reaches thread-locals the dynamic way (%s): build it "
            "with -ftls-model=initial-exec" % sorted(set(dynamic)))
    t.check("__tls_get_addr" not in readelf("--dyn-syms"),
            "libmemtop.so imports __tls_get_addr")
    if re.search(r"^\s+TLS\s", readelf("-l"), re.M):
        t.check("STATIC_TLS" in readelf("-d"), "libmemtop.so has TLS but no STATIC_TLS flag")
t.finish()
