#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/ and runs each for a
# while on a scratch copy of its committed corpus. Usage: scripts/fuzz.sh [SECONDS]
# (default 20 s per target). New interesting inputs stay in build-fuzz/corpus/; copy them
# into fuzz/corpus/ to keep them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DSHOAL_FUZZ=ON -DSHOAL_BUILD_COLLECTIVE=OFF >/dev/null
targets=(job_spec units progress_line prototxt s3_xml am_message protocol mpirun_output api_request slurm_output train_flags data_source http_framing cgroup_text users_file queue_config aws_config archive_listing local_names)
ninja -C build-fuzz -j2 "${targets[@]/#/fuzz_}"
for t in "${targets[@]}"; do
  if [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
    echo "fuzz: fuzz/corpus/$t is missing or empty; commit seed inputs for fuzz_$t" >&2
    exit 1
  fi
  mkdir -p "build-fuzz/corpus/$t"
  for seed in fuzz/corpus/"$t"/*; do  # the seeds, beside what earlier runs found
    [ -e "build-fuzz/corpus/$t/${seed##*/}" ] || cp "$seed" "build-fuzz/corpus/$t/"
  done
  echo "== fuzz_$t for ${seconds}s"
  log="build-fuzz/fuzz_$t.log"
  status=0
  build-fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crash-$t-" "build-fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -40 "$log"
    echo "fuzz: fuzz_$t found a problem (exit $status); the input is in build-fuzz/crash-$t-*"
    exit 1
  fi
done
echo "fuzz: no findings"
