#!/usr/bin/env bash
# Every test: installs what is needed, builds, runs the unit tests (ctest, label "unit",
# about a minute) and then the end-to-end tests with real processes (pytest, tests/e2e,
# marked "slow"), the web UI in headless Chromium (tests/browser, node's test runner),
# then each parser's fuzzer briefly. Usage: scripts/test.sh [--unit-only]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tier_start=$start
tier_name="installing and building"
# Ends the tier running (printing how long it took) and starts the next one, if named.
tier() {
  local now
  now=$(date +%s)
  echo "-- $tier_name took $(( now - tier_start )) s"
  tier_name=${1:-}
  tier_start=$now
  if [ -n "$tier_name" ]; then echo "== $tier_name"; fi
}
scripts/install-deps.sh
scripts/build.sh
tier "unit tests"
# Every test is labelled (unit): a test outside the label would never run anywhere.
total=$(ctest --test-dir build -N | sed -n 's/^Total Tests: //p')
unit=$(ctest --test-dir build -N -L unit | sed -n 's/^Total Tests: //p')
if [ "${total:-0}" -eq 0 ] || [ "$unit" != "$total" ]; then
  echo "test.sh: ctest lists ${total:-0} tests, ${unit:-0} of them labelled unit; label every test (shoal_add_unit_test)" >&2
  exit 1
fi
ctest --test-dir build -L unit --output-on-failure -j2 --timeout 120 --no-tests=error
if [ "${1:-}" = "--unit-only" ]; then tier; exit 0; fi
tier "end-to-end tests"
mkdir -p tests/artifacts
SHOAL_BIN="$(pwd)/build/shoal" /usr/bin/python3 -m pytest -ra -p no:cacheprovider tests/e2e \
  --junitxml=tests/artifacts/e2e.xml
scripts/skipped-tests.py tests/artifacts/e2e.xml
tier "chaos, the short version (tests/chaos/chaos.py; the long one runs each fault 20 times)"
SHOAL_BIN="$(pwd)/build/shoal" /usr/bin/python3 tests/chaos/chaos.py --runs 1
tier "the web UI in a browser"
SHOAL_BIN="$(pwd)/build/shoal" node --test tests/browser/web_ui.test.mjs | tee tests/artifacts/browser.tap
if ! grep -Eq '^# pass [1-9]' tests/artifacts/browser.tap; then
  echo "test.sh: the browser tier ran no test" >&2
  exit 1
fi
tier "fuzzing every parser briefly"
scripts/fuzz.sh 10
tier
echo "== all tests passed in $(( $(date +%s) - start )) s"
