#!/usr/bin/env python3
"""Lists the tests a JUnit XML report (pytest --junitxml) says were skipped, with their
reasons, and exits 1 when there are any: every end-to-end test is meant to run on a
machine set up by scripts/install-deps.sh as root (Slurm, the tmpfs disk-full tests), so a
skip there is a test CI did not run. Set SHOAL_ALLOW_SKIPS=1 to list them without failing
(a developer's machine without root or Slurm).

Usage: scripts/skipped-tests.py REPORT.xml"""
import os
import sys
import xml.etree.ElementTree as ElementTree


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        root = ElementTree.parse(sys.argv[1]).getroot()
    except (OSError, ElementTree.ParseError) as error:
        print(f"skipped-tests: cannot read the report {sys.argv[1]}: {error}", file=sys.stderr)
        return 2
    cases = list(root.iter("testcase"))
    skipped = [(f"{case.get('classname')}::{case.get('name')}", skip.get("message", ""))
               for case in cases for skip in case.findall("skipped")]
    if not cases:
        print("skipped-tests: the report holds no test at all: the tier ran nothing", file=sys.stderr)
        return 1
    for name, reason in skipped:
        print(f"SKIPPED {name}: {reason}")
    print(f"{len(cases)} tests, {len(skipped)} skipped")
    if skipped and os.environ.get("SHOAL_ALLOW_SKIPS") != "1":
        print("skipped-tests: every end-to-end test must run here (set SHOAL_ALLOW_SKIPS=1 on a machine "
              "without root or Slurm)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
