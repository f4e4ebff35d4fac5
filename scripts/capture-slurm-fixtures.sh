#!/usr/bin/env bash
# Captures what the test Slurm cluster's own commands print, as the Slurm backend's parser
# fixtures (src/backend/slurm/testdata/, read by slurm_test.cc): squeue --json with a
# running heterogeneous job and a pending one, scontrol show job for ended jobs (failed,
# cancelled, completed), sinfo --json and the sinfo line format, and sacct --json from the
# cluster's accounting (slurmdbd) for those ended jobs. Rerun it after a Slurm upgrade and
# commit what changed. (sacct-without-accounting.txt was captured from a cluster without
# slurmdbd, before the test cluster kept accounting.)
#
#   scripts/capture-slurm-fixtures.sh      # needs root; starts and stops the test cluster
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../src/backend/slurm/testdata"
work=$(mktemp -d)
trap 'scancel --user=root >/dev/null 2>&1 || true; "$here/slurm-down.sh" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$out"
"$here/slurm-up.sh"

# sbatch SCRIPT-BODY [sbatch options...]: the job id.
submit() {
  local body=$1
  shift
  printf '#!/bin/sh\n%s\n' "$body" > "$work/job.sh"
  sbatch --parsable --chdir="$work" --output=/dev/null "$@" "$work/job.sh" | cut -d';' -f1
}
# state JOB: the job's state as scontrol shows it.
state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
wait_state() {
  local job=$1 wanted=$2 end=$((SECONDS + 60))
  until [ "$(state "$job")" = "$wanted" ]; do
    [ $SECONDS -ge $end ] && { echo "job $job never reached $wanted (it is $(state "$job"))" >&2; exit 1; }
    sleep 0.2
  done
}

# A heterogeneous job of two components (one per node, as Shoal's roles are), running;
# and a job that cannot start while it runs (every CPU of both nodes asked for).
het=$(submit 'sleep 60' --job-name=shoal-job-1-1 --ntasks=1 --cpus-per-task=4 : --ntasks=1 --cpus-per-task=4)
wait_state "$het" RUNNING
pending=$(submit 'sleep 1' --job-name=shoal-job-2-1 --ntasks=1 --cpus-per-task=4)
wait_state "$pending" PENDING
squeue --json > "$out/squeue-running-het-and-pending.json"
scontrol show job "$het" > "$out/scontrol-running-het.txt"
scancel "$het" "$pending"
wait_state "$het" CANCELLED
scontrol show job "$het" > "$out/scontrol-cancelled-het.txt"

failed=$(submit 'exit 3' --job-name=shoal-job-3-1 --ntasks=1)
wait_state "$failed" FAILED
scontrol show job "$failed" > "$out/scontrol-failed-exit-3.txt"
done_=$(submit 'true' --job-name=shoal-job-4-1 --ntasks=1)
wait_state "$done_" COMPLETED
scontrol show job "$done_" > "$out/scontrol-completed.txt"
# slurmdbd records a job a moment after it ends.
ended="$het,$failed,$done_"
end=$((SECONDS + 60))
until [ "$(sacct -X -n -P -o State --jobs="$ended" | sort -u | tr '\n' ' ')" = "CANCELLED by 0 COMPLETED FAILED " ]; do
  [ $SECONDS -ge $end ] && { echo "sacct never recorded jobs $ended: $(sacct -X -n -P -o JobID,State --jobs="$ended")" >&2; exit 1; }
  sleep 0.5
done
sacct --json --jobs="$ended" > "$out/sacct-het-cancelled-failed-completed.json"

sinfo --json > "$out/sinfo.json"
sinfo -h -N -o "%N %T" > "$out/sinfo-node-states.txt"
echo "fixtures written to $out:" >&2
ls -l "$out" >&2
