#!/usr/bin/env bash
# The whole test suite under a sanitizer: builds with the CMake preset (asan-ubsan or
# tsan) into its own folder, runs the unit tests, then the end-to-end tests with the
# sanitized binary (every server, AM and container agent they start is sanitized; a
# report aborts that process, which fails its test). Slow: about three times a normal
# build and run. Usage: scripts/test-sanitized.sh asan-ubsan|tsan [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:?usage: scripts/test-sanitized.sh asan-ubsan|tsan [pytest args...]}
shift
case "$preset" in
  asan-ubsan) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
  tsan) export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
  *) echo "test-sanitized: unknown preset '$preset': use asan-ubsan or tsan" >&2; exit 2 ;;
esac
scripts/install-deps.sh
cmake --preset "$preset" -DSHOAL_BUILD_COLLECTIVE=ON >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" --output-on-failure --timeout 300
SHOAL_BIN="$(pwd)/build-$preset/shoal" /usr/bin/python3 -m pytest -ra -p no:cacheprovider tests/e2e "$@"
echo "test-sanitized: $preset passed"
