#!/usr/bin/env bash
# Stops the Ceph daemons scripts/ceph-up.sh started (by their pid files only: nothing
# else is touched) and removes their state. Safe to run when nothing is running.
# Env: SHOAL_CEPH_DIR (default /var/tmp/shoal-ceph); KEEP=1 keeps the state directory.
D=${SHOAL_CEPH_DIR:-/var/tmp/shoal-ceph}
stopped=0
pids=()
for p in "$D"/run/*.pid; do
  [ -f "$p" ] || continue
  pid=$(cat "$p")
  # A stale pid file may name a pid reused by something else: only Ceph's daemons.
  case "$(cat "/proc/$pid/comm" 2>/dev/null)" in ceph-mon|ceph-osd|radosgw|ceph-mgr) ;; *) continue ;; esac
  if kill "$pid" 2>/dev/null; then
    stopped=$((stopped + 1))
    pids+=("$pid")
  fi
done
# All were asked at once; give them 10 s together, then SIGKILL what is left.
for _ in $(seq 1 50); do
  alive=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 0.2
done
for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
[ "${KEEP:-0}" = 1 ] || rm -rf "$D"
echo "ceph-down: stopped $stopped daemon(s)"
exit 0
