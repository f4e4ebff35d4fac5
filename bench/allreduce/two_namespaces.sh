#!/bin/bash
# Shoal's allreduce on two real hosts made of network namespaces joined by a veth
# pair (2 hosts x 2 ranks by default): shared memory within each namespace and the
# hierarchical allreduce, against Shoal over TCP only on the same layout (its flat
# ring over every link), in the same run. Needs root; removes what it creates.
# Usage: bench/allreduce/two_namespaces.sh [build dir] [ranks per host] [reps]
set -euo pipefail
BUILD=${1:-build}
PER_HOST=${2:-2}
REPS=${3:-3}
WORKER="$BUILD/bench/allreduce/allreduce_bench_shoal"
[ -x "$WORKER" ] || { echo "two_namespaces.sh: $WORKER is missing; build the target allreduce_bench_shoal" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "two_namespaces.sh: needs root (ip netns)" >&2; exit 2; }
A=shoal-bench-a B=shoal-bench-b
cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add "$A"; ip netns add "$B"
ip link add shoal-bench-va type veth peer name shoal-bench-vb
ip link set shoal-bench-va netns "$A"; ip link set shoal-bench-vb netns "$B"
ip -n "$A" addr add 10.77.0.1/24 dev shoal-bench-va; ip -n "$B" addr add 10.77.0.2/24 dev shoal-bench-vb
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set shoal-bench-va up; ip -n "$B" link set shoal-bench-vb up
RANKS=$((2 * PER_HOST))
NETNS="$A=10.77.0.1,$B=10.77.0.2"
OUT=$(mktemp -d)
for rep in $(seq "$REPS"); do
  "$WORKER" --ranks "$RANKS" --netns "$NETNS" --transport shm >> "$OUT/shm"
  "$WORKER" --ranks "$RANKS" --netns "$NETNS" --transport tcp >> "$OUT/tcp"
done
echo
echo "### 2 hosts (network namespaces joined by veth) x $PER_HOST ranks, float32 sum (best of $REPS runs each)"
echo
echo "| size | Shoal algorithm | time (us) | busbw (GB/s) | TCP-only time (us) | TCP-only busbw | x TCP-only |"
echo "|---:|---|---:|---:|---:|---:|---:|"
awk -v n="$RANKS" '
  FNR == 1 { file++ }
  $1 == "RESULT" { b = $2; t = $3
    if (file == 1) { if (!(b in s) || t < s[b]) { s[b] = t; a[b] = $4 } }
    else if (!(b in c) || t < c[b]) c[b] = t }
  END { f = 2 * (n - 1) / n
    for (b in s) {
      size = b + 0 >= 1048576 ? (b / 1048576) " MiB" : (b / 1024) " KiB"
      printf "%d| %s | %s | %.1f | %.3f | %.1f | %.3f | %.2f |\n", b, size, a[b], s[b] * 1e6, b / s[b] / 1e9 * f,
             c[b] * 1e6, b / c[b] / 1e9 * f, c[b] / s[b] }
  }' "$OUT/shm" "$OUT/tcp" | sort -n | cut -d'|' -f2- | sed 's/^/|/'
rm -rf "$OUT"
