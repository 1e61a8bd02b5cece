#!/usr/bin/env python3
"""check_labels.py CTEST BUILD_DIR -- every test registered in BUILD_DIR has
a label of its kind, so that `ctest -L KIND` selects it (tests/CMakeLists.txt
says which labels exist).  Lists the tests without one and exits 1."""
import json
import subprocess
import sys

ctest, build = sys.argv[1], sys.argv[2]
out = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], check=True,
                     capture_output=True, text=True).stdout
tests = json.loads(out)["tests"]


def labels(test):
    for prop in test.get("properties", []):
        if prop["name"] == "LABELS":
            return [lab for lab in prop["value"] if lab != "fast"]
    return []


missing = sorted(t["name"] for t in tests if not labels(t))
if len(tests) < 2:
    sys.exit("check_labels: ctest lists %d tests in %s" % (len(tests), build))
if missing:
    sys.exit("tests with no label of their kind: " + " ".join(missing))
print("%d tests, each labelled" % len(tests))
