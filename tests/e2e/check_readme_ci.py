#!/usr/bin/env python3
"""check_readme_ci.py -- the README's set-up commands and .ci/run agree.

Why it exists: the README promises exactly two set-up commands for a fresh
machine, and CI must run the second one (the test command) verbatim, so the
two cannot drift apart.  Checks: README.md has exactly two one-line commands
that start with ./scripts/install-deps.sh; the first runs memtop's interactive viewer on the demo,
the second runs ctest; .ci/run contains the second as a line of its own; the
scripts they name exist and are executable.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check  # noqa: E402

PREFIX = "./scripts/install-deps.sh"


def read(path):
    check(os.path.exists(path), "%s does not exist" % path)
    with open(path, encoding="utf-8") as f:
        return f.read()


def test(args):
    root = os.path.abspath(args.source_dir)
    readme = read(os.path.join(root, "README.md"))
    cmds = [ln.strip() for ln in readme.splitlines() if ln.strip().startswith(PREFIX)]
    check(len(cmds) == 2, "README.md should have exactly two set-up commands starting with %s,"
          " found %d: %s" % (PREFIX, len(cmds), cmds))
    demo_cmd, test_cmd = cmds
    check("memtop" in demo_cmd and "memtop-demo" in demo_cmd,
          "the first set-up command does not run memtop on memtop-demo: " + demo_cmd)
    check("--batch" not in demo_cmd and "--export" not in demo_cmd,
          "the first set-up command should open the interactive viewer, not a report: " + demo_cmd)
    check("ctest" in test_cmd, "the second set-up command does not run ctest: " + test_cmd)
    ci = read(os.path.join(root, ".ci", "run"))
    ci_lines = [ln.strip() for ln in ci.splitlines()]
    check(ci.startswith("#!/usr/bin/env bash\n"), ".ci/run does not start with the bash shebang")
    check("set -euo pipefail" in ci_lines, ".ci/run does not set -euo pipefail")
    check(test_cmd in ci_lines, ".ci/run does not run the README's test command verbatim:\n"
          "  README: %s\n  .ci/run lines: %s" % (test_cmd, ci_lines))
    for script in (os.path.join(root, "scripts", "install-deps.sh"),
                   os.path.join(root, ".ci", "run")):
        check(os.access(script, os.X_OK), "%s is not executable" % script)


if __name__ == "__main__":
    e2elib.main(test, __doc__.splitlines()[1])
