#!/usr/bin/env bash
# Every test: installs what is needed, builds, runs the unit tests (ctest, label "unit",
# about a minute) and then the end-to-end tests with real processes (pytest, tests/e2e,
# marked "slow"), the web UI in headless Chromium (tests/browser, node's test runner),
# then each parser's fuzzer briefly. Usage: scripts/test.sh [--unit-only]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/install-deps.sh
scripts/build.sh
echo "== unit tests"
ctest --test-dir build -L unit --output-on-failure -j2 --timeout 120
if [ "${1:-}" = "--unit-only" ]; then exit 0; fi
echo "== end-to-end tests"
mkdir -p tests/artifacts
SHOAL_BIN="$(pwd)/build/shoal" /usr/bin/python3 -m pytest -ra -p no:cacheprovider tests/e2e \
  --junitxml=tests/artifacts/e2e.xml
echo "== chaos, the short version (tests/chaos/chaos.py; the long one runs each fault 20 times)"
SHOAL_BIN="$(pwd)/build/shoal" /usr/bin/python3 tests/chaos/chaos.py --runs 1
echo "== the web UI in a browser"
SHOAL_BIN="$(pwd)/build/shoal" node --test tests/browser/
echo "== fuzzing every parser briefly"
scripts/fuzz.sh 10
echo "== all tests passed in $(( $(date +%s) - start )) s"
