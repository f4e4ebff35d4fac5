# Shared by scripts/slurm-up.sh and scripts/slurm-down.sh: names, addresses and helpers
# of the test Slurm cluster. Sourced, not run.
BRIDGE=shoal-br0
BRIDGE_ADDR=10.253.0.1
SLURM_LOG=/var/log/shoal-slurm
SLURM_LIB=/var/lib/shoal-slurm
SLURM_RUN=/run/shoal-slurm
unset SLURM_CONF

node_ns() { echo "shoal-node$1"; }
node_addr() { echo "10.253.0.$((10 + $1))"; }

log() { echo "[slurm $(date +%T)] $*" >&2; }
die() { log "error: $*"; exit 1; }

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $end ] && die "gave up after ${limit} s waiting for $what"
    sleep 0.2
  done
}

# start_slurmd I: node I's slurmd, in its own network and UTS namespace. nsenter, not
# `ip netns exec`: the latter remounts /sys under slurmd.
start_slurmd() {
  mkdir -p "$SLURM_LIB/slurmd-node$1"
  nsenter --net="/run/netns/$(node_ns "$1")" unshare --uts sh -c "hostname node$1 && exec slurmd -N node$1"
}

# stop_slurmd I: node I's slurmd only; its running steps go on, as when a node's daemon dies.
stop_slurmd() {
  local f="$SLURM_RUN/slurmd-node$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  rm -f "$f"
}
