"""check_export.py -- `e` writes a valid snapshot and shows its path.

Asserts: after `e` the status line says "exported <path>"; the file is
memtop-PID-YYYYmmdd-HHMMSS.json in memtop's working directory; it is JSON
with the documented snapshot shape ("memtop_snapshot": 1, the demo's pid,
totals, traces); a trace has session_log_append as a frame's function and live
bytes; the file is neither group- nor world-writable.  The file mode itself is
printed (0600 is what a snapshot of another process's memory should have).
"""
import os
import re
import stat

import tuilib
from tuilib import e2elib
from tuilib import check


def test(t):
    t.start([t.memtop, "--", t.demo, "60"])
    t.wait_symbolized()
    pid = int(re.search(r"memtop pid (\d+)", t.screen()).group(1))
    shown = t.export_status("e", ".json", set(), tuilib.json_complete)
    path = t.default_file(shown, pid, ".json", "the status line")
    snap = e2elib.load_json(path)
    errs = e2elib.snapshot_shape_errors(snap)
    check(not errs, "the exported snapshot departs from the schema:\n  " + "\n  ".join(errs))
    check(snap["pid"] == pid, "snapshot pid %r, expected %d" % (snap["pid"], pid))
    check(snap["exited"] is False, "snapshot of a running demo says exited")
    leak = [tr for tr in snap["traces"]
            if any(fr.get("function") == "session_log_append" for fr in tr["frames"])]
    check(leak, "no trace has a frame with function session_log_append")
    check(leak[0]["live_bytes"] > 0, "session_log_append's trace has no live bytes")
    check(any(fr.get("function") == "cache_fill" for tr in snap["traces"] for fr in tr["frames"]),
          "no trace has a frame with function cache_fill")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    print("export file mode: %04o" % mode)
    check(not mode & (stat.S_IWGRP | stat.S_IWOTH),
          "the export is group/world-writable: mode %04o" % mode)


tuilib.main(test, __doc__)
