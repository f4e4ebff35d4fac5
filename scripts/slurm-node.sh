#!/usr/bin/env bash
# Stops or starts one node's slurmd in the test cluster of scripts/slurm-up.sh, as a
# node failure and its repair: `scripts/slurm-node.sh stop 2`, `scripts/slurm-node.sh start 2`.
# Stopping leaves the node's running steps alone, as a crashed daemon would.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/slurm-common.sh"
[ $# = 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || die "usage: $0 stop|start NODE_NUMBER"
[ -e "/run/netns/$(node_ns "$2")" ] || die "node$2 is not part of the cluster; run scripts/slurm-up.sh"
case "$1" in
  stop) stop_slurmd "$2" ;;
  start) [ -f "$SLURM_RUN/slurmd-node$2.pid" ] && [ -e "/proc/$(cat "$SLURM_RUN/slurmd-node$2.pid")" ] || start_slurmd "$2" ;;
  *) die "usage: $0 stop|start NODE_NUMBER" ;;
esac
