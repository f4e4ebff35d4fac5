#!/usr/bin/env bash
# Stops the test Slurm cluster of scripts/slurm-up.sh: slurmctld, every slurmd, and every
# process left in the nodes' namespaces (job steps included), then removes the namespaces
# and the bridge. Idempotent; munged and MariaDB are left running (other tools may use
# them), slurmdbd is stopped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/slurm-common.sh"

alive() { [ -e "/proc/$1" ] && ! awk '{exit ($3 == "Z") ? 0 : 1}' "/proc/$1/stat" 2>/dev/null; }

# TERM, up to 10 s, then KILL.
stop_pids() {
  local pids=("$@") p
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 50); do
    local left=0
    for p in "${pids[@]}"; do alive "$p" && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.2
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^shoal-node[0-9]+$' || true; }

pids=()
for f in "$SLURM_RUN"/slurmctld.pid "$SLURM_RUN"/slurmd-*.pid "$SLURM_RUN"/slurmdbd.pid; do
  [ -f "$f" ] && pids+=("$(cat "$f")")
done
for ns in $(namespaces); do
  for p in $(ip netns pids "$ns" 2>/dev/null); do pids+=("$p"); done
done
stop_pids "${pids[@]}"
rm -f "$SLURM_RUN"/*.pid
for ns in $(namespaces); do ip netns del "$ns"; done
ip link del "$BRIDGE" 2>/dev/null || true
log "Slurm is down"
