#!/usr/bin/env bash
# Training throughput of `shoal train` against PyTorch DDP (gloo), same net (Caffe's LeNet,
# then Caffe's CIFAR-10 quick net on Fashion-MNIST's images), batch (64 per worker), data
# (Fashion-MNIST, contiguous shards read in order), solver and threads (2 cores shared out:
# 2 threads for 1 worker, 1 each for 2), in the same run, for 1 and 2 workers; prints
# images/s, the ratio shoal/DDP and the 1 -> 2 workers scaling, per net.
# Usage: bench/train/run.sh [ITERATIONS] [NETS] (default 300, "lenet cifar10_quick"). Needs
# build-*/shoal-train (SHOAL_TRAIN_BIN=path to choose one). Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")"
iters=${1:-300}
nets=${2:-lenet cifar10_quick}
bin=${SHOAL_TRAIN_BIN:-$(ls -t ../../build*/shoal-train 2>/dev/null | head -1)}
[ -x "$bin" ] || { echo "no shoal-train binary: build Shoal first" >&2; exit 1; }
cores=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shoal_run() {  # workers -> images/s
  local w=$1 threads=$(( cores / $1 < 1 ? 1 : cores / $1 )) pids=()
  rm -rf "$tmp/rdv"; mkdir -p "$tmp/rdv"
  for r in $(seq 0 $((w - 1))); do
    "$bin" -train -conf "$tmp/solver.prototxt" -model "$tmp/m.caffemodel" -threads "$threads" \
      -clusterSize "$w" -rank "$r" -rendezvous "$tmp/rdv" > "$tmp/shoal-$w-$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  sed -n 's/.*Optimization done: .* s, \([0-9.]*\) images\/s.* CPU s, \([0-9.]*\) images per CPU s.*/\1 \2/p' "$tmp/shoal-$w-0.log"
}

ddp_run() {
  local w=$1 threads=$(( cores / $1 < 1 ? 1 : cores / $1 )) pids=() port=$((29500 + RANDOM % 1000))
  for r in $(seq 0 $((w - 1))); do
    RANK=$r WORLD_SIZE=$w MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=$threads \
      /usr/bin/python3 ddp_bench.py --net "$net_name" --iters "$iters" --threads "$threads" > "$tmp/ddp-$w-$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  sed -n 's/.* s, \([0-9.]*\) images\/s .* CPU s, \([0-9.]*\) images per CPU s.*/\1 \2/p' "$tmp/ddp-$w-0.log"
}

declare -A shoal ddp shoal_cpu ddp_cpu
ratio() { echo "$1 / $2" | bc -l | cut -c1-5; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for net_name in $nets; do
  case $net_name in
    lenet) net="$(cd ../../examples/lenet-fashion-mnist && pwd)/lenet_train_test.prototxt" ;;
    cifar10_quick) net="$(pwd)/cifar10_quick_fashion.prototxt" ;;
    *) echo "unknown net '$net_name' (lenet, cifar10_quick)" >&2; exit 2 ;;
  esac
  sed -e "s|^max_iter: .*|max_iter: $iters|" -e "s|^net: .*|net: \"$net\"|" lenet_bench_solver.prototxt > "$tmp/solver.prototxt"
  for w in 1 2; do
    read -r ddp[$w] ddp_cpu[$w] <<< "$(ddp_run $w)"
    read -r shoal[$w] shoal_cpu[$w] <<< "$(shoal_run $w)"
    echo "$net_name workers=$w  shoal train: ${shoal[$w]} images/s (${shoal_cpu[$w]} per CPU s)  PyTorch DDP: ${ddp[$w]} images/s (${ddp_cpu[$w]} per CPU s)  ratio: $(ratio "${shoal[$w]}" "${ddp[$w]}")x (per CPU s: $(ratio "${shoal_cpu[$w]}" "${ddp_cpu[$w]}")x)"
  done
  echo "$net_name scaling 1 -> 2 workers: shoal train $(ratio "${shoal[2]}" "${shoal[1]}")x, PyTorch DDP $(ratio "${ddp[2]}" "${ddp[1]}")x"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
