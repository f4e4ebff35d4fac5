#!/usr/bin/env bash
# Configures and builds Shoal into build/ (Release with debug info). Prints where the
# binary is. Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(( $(nproc) < 2 ? 1 : 2 ))
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C build -j"$jobs"
echo "build: $(pwd)/build/shoal"
