#!/usr/bin/env bash
# Installs everything Shoal needs to build, run its examples and run its tests, from
# Debian 12's packages only. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config
  libyaml-cpp-dev nlohmann-json3-dev libcpp-httplib-dev libcli11-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libssl-dev libcurl4-openssl-dev
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer, ASan and UBSan
  clang libclang-rt-14-dev
  # the collective library's baselines (bench/allreduce)
  libgloo-dev libopenmpi-dev openmpi-bin
  # the examples and end-to-end tests
  python3 python3-torch python3-pytest python3-numpy dataset-fashion-mnist procps
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
