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
  # shoal train (src/train): LibTorch, protobuf for the prototxt schema, LMDB and zlib data sources
  libtorch-dev protobuf-compiler libprotobuf-dev liblmdb-dev zlib1g-dev bc libhdf5-dev
  # LMDB databases of Caffe Datums for the Caffe and CaffeOnSpark files' tests (mdb_load)
  lmdb-utils
  # the examples and end-to-end tests
  python3 python3-torch python3-pytest python3-numpy dataset-fashion-mnist procps
  python3-xgboost python3-mpi4py unzip
  # `shoal stack`: native stacks with gdb, Python stacks with python3-dbg's gdb helpers
  gdb python3-dbg
  # the Slurm backend's test cluster (scripts/slurm-up.sh, tests/e2e/test_slurm.py)
  munge slurmctld slurmd slurm-client slurm-wlm-basic-plugins iproute2 util-linux
  # its accounting (sacct), as a site keeps it: slurmdbd on MariaDB
  slurmdbd mariadb-server
  # the web UI's browser test (tests/browser): headless Chromium, never a downloaded one
  chromium
  # data management: S3 replies (tinyxml2), and a single-node Ceph with its RADOS Gateway
  # for the S3 tests and benchmarks (scripts/ceph-up.sh)
  libtinyxml2-dev ceph-mon ceph-osd radosgw uuid-runtime curl
  # an https S3 endpoint with a CA of its own (tests/e2e/test_data.py makes one)
  openssl
  # `image:` tasks (OCI containers through runc, root filesystems from podman's storage) and
  # their test images (scripts/build-test-images.sh); as root, so no uidmap
  podman runc mmdebstrap
)
# node and npm build the web UI's dependencies (web/package.json); a node that is already
# on PATH (e.g. from NodeSource, whose nodejs carries npm) is used as it is.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

# `npm ci` in web/ when web/node_modules is missing or older than the lock file.
install_web_modules() {
  local web
  web="$(cd "$(dirname "$0")/.." && pwd)/web"
  if [ ! -d "$web/node_modules" ] || [ "$web/package-lock.json" -nt "$web/node_modules" ]; then
    echo "install-deps: npm ci in $web"
    (cd "$web" && npm ci --no-audit --no-fund) && touch "$web/node_modules"
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_web_modules
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
install_web_modules
