"""samplib.py -- what the sampling tests share: e2elib (tests/e2e), and the
traces of a JSON export found by the function of their first frame."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2elib  # noqa: E402,F401

MIB = 1 << 20


def by_function(snap):
    """{function name of the innermost frame: [traces]} of a JSON export."""
    out = {}
    for t in snap["traces"]:
        fr = t.get("frames") or []
        name = fr[0].get("function") if fr else None
        out.setdefault(name, []).append(t)
    return out


def site_sum(snap, name, key):
    """key summed over the traces whose innermost frame is in function name."""
    return sum(t[key] for t in by_function(snap).get(name, []))
