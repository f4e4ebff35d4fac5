#!/usr/bin/env bash
# Builds the small OCI images that the `image:` tests run tasks in, into root's podman storage
# (/var/lib/containers/storage), from Debian 12 (bookworm) packages only; no registry is used.
#
#   localhost/shoal-test-base:1   minbase + python3 (python3-minimal lacks json)  121 MB  ~40 s
#   localhost/shoal-test-numpy:1  the same + python3-numpy                        176 MB  ~40 s
#   localhost/shoal-test-nosh:1   one file, /hello.txt; no /bin/sh (refusal tests)  11 kB   0 s
#   localhost/shoal-test-torch:1  numpy + python3-torch, only with --with-torch    1.2 GB ~4 min
# (times measured on 2 busy cores; all images get ENV PATH and no CMD or ENTRYPOINT).
#
# Each image is built only when `podman image exists NAME` is false, so podman's storage is
# the cache and a run with every image present takes about 0.2 s; delete an image
# (podman rmi NAME) to rebuild it. A fresh build downloads from the mirror in
# /etc/apt/sources.list.d/debian.sources (deb.debian.org), SHOAL_DEBIAN_MIRROR if set, or
# mmdebstrap's default deb.debian.org.
# Root filesystems are made with mmdebstrap into a temporary directory under
# ${TMPDIR:-/var/tmp}, imported with `podman import`, and removed on exit (mmdebstrap's own
# work directory is under ${TMPDIR:-/tmp}; the torch build needs about 3 GB free there).
#
# Usage: scripts/build-test-images.sh [--with-torch]
# Exit: 0 all images present; 2 podman or mmdebstrap missing (or bad usage); 1 a build failed.
# Runs as root (re-executes itself through sudo otherwise). Concurrent runs are serialised by
# a lock file, so test runners may call it in parallel.
set -euo pipefail

with_torch=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-test-images: unknown argument '$arg' (usage: $0 [--with-torch])" >&2; exit 2 ;;
  esac
done

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-test-images: not found on PATH: ${missing[*]}; install it with" \
       "scripts/install-deps.sh (or: apt-get install -y --no-install-recommends podman runc" \
       "mmdebstrap)" >&2
  exit 2
fi

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then exec sudo -- "$0" "$@"; fi
  echo "build-test-images: must run as root (the images go to root's podman storage)" >&2
  exit 2
fi

# One build at a time: two runs would both build the same image.
exec 9>/run/lock/shoal-build-test-images.lock
flock 9

# The host's Debian sources (deb.debian.org here) unless told otherwise; mmdebstrap pastes a
# deb822 file into the chroot as it is. Without either, mmdebstrap's default deb.debian.org.
mirrors=()
if [ -n "${SHOAL_DEBIAN_MIRROR:-}" ]; then
  mirrors=("$SHOAL_DEBIAN_MIRROR")
elif grep -qs '^Suites:.*bookworm' /etc/apt/sources.list.d/debian.sources; then
  mirrors=(/etc/apt/sources.list.d/debian.sources)
fi

tmp="$(mktemp -d "${TMPDIR:-/var/tmp}/shoal-test-images.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# An image's size, "N MB" (or "N kB" below a megabyte).
image_size() {
  local bytes
  bytes="$(podman image inspect --format '{{.Size}}' "$1")"
  if [ "$bytes" -ge 1000000 ]; then echo "$((bytes / 1000000)) MB"; else echo "$((bytes / 1000)) kB"; fi
}

# build NAME COMMAND...: runs COMMAND (which writes $tmp/rootfs.tar) and imports the tarball
# as NAME, unless NAME already exists.
build() {
  local name="$1"; shift
  if podman image exists "$name"; then
    echo "build-test-images: $name present ($(image_size "$name"))"
    return
  fi
  local start=$SECONDS
  rm -f "$tmp/rootfs.tar"
  if ! "$@" >"$tmp/build.log" 2>&1; then
    tail -n 40 "$tmp/build.log" >&2
    echo "build-test-images: building $name failed (log above)" >&2
    exit 1
  fi
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tmp/rootfs.tar" "$name" >/dev/null
  rm -f "$tmp/rootfs.tar"
  echo "build-test-images: $name built in $((SECONDS - start)) s ($(image_size "$name"))"
}

# debian PACKAGES: a bookworm minbase root filesystem with PACKAGES (comma-separated), merged
# /usr, without documentation, manual pages or translations.
debian() {
  mmdebstrap --variant=minbase --include="$1" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$tmp/rootfs.tar" "${mirrors[@]}"
}

# nosh: a root filesystem of one text file, so no /bin/sh (nor anything else) to run.
nosh() {
  mkdir -p "$tmp/nosh"
  echo "This image has no shell." >"$tmp/nosh/hello.txt"
  tar -C "$tmp/nosh" --owner=0 --group=0 --mtime=@0 -cf "$tmp/rootfs.tar" hello.txt
}

build localhost/shoal-test-base:1 debian python3
build localhost/shoal-test-numpy:1 debian python3,python3-numpy
build localhost/shoal-test-nosh:1 nosh
if [ "$with_torch" -eq 1 ]; then
  build localhost/shoal-test-torch:1 debian python3,python3-numpy,python3-torch
fi
